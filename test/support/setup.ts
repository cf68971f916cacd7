import { beforeAll } from 'vitest';
import { resetDatabase, sharedTestDatabase } from './db.js';

beforeAll(async () => {
  await resetDatabase(await sharedTestDatabase());
});
