import type { Api } from '../../http/types.js';
import type { Services } from '../../services.js';

export function rateRoutes(_app: Api, _services: Services): void {}
