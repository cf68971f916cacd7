import { errors } from '../../http/common-schemas.js';
import type { Api } from '../../http/types.js';
import type { PlatformService } from './service.js';
import { ClockAdvance, ClockState, PlatformConfig, PlatformConfigUpdate } from './schemas.js';

export function platformRoutes(app: Api, platforms: PlatformService): void {
  app.get(
    '/config',
    {
      schema: {
        summary: 'Get the platform configuration',
        tags: ['Platform Configuration'],
        response: { 200: PlatformConfig, ...errors() },
      },
    },
    async (request) => platforms.presentConfig(request.platform),
  );

  app.patch(
    '/config',
    {
      schema: {
        summary: 'Update the platform configuration',
        description: 'Fields left out keep their values; `supportedCurrencies` replaces the whole list. Adding a currency opens an internal account in it for the platform and every customer.',
        tags: ['Platform Configuration'],
        body: PlatformConfigUpdate,
        response: { 200: PlatformConfig, ...errors(403) },
      },
    },
    async (request) => platforms.updateConfig(request.ctx, request.body),
  );

  app.post(
    '/sandbox/clock/advance',
    {
      schema: {
        summary: 'Move the sandbox test clock forward',
        description: 'Moves this sandbox platform\'s clock forward and runs every scheduled job that becomes due (payment delays, quote expiry, resets), before responding. Production platforms get 403.',
        tags: ['Sandbox'],
        body: ClockAdvance,
        response: { 200: ClockState, ...errors(403) },
      },
      config: { permission: 'TRANSACT' },
    },
    async (request) => platforms.advanceClock(request.ctx, request.body.seconds),
  );
}
