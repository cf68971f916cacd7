import type { Api } from '../../http/types.js';
import type { Services } from '../../services.js';

export function externalAccountRoutes(_app: Api, _services: Services): void {}
