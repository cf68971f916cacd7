import type { Api } from '../../http/types.js';
import type { Services } from '../../services.js';

export function accountRoutes(_app: Api, _services: Services): void {}
