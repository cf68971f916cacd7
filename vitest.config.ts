import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    pool: 'forks',
    // One database per worker, shared by the files it runs (PGlite takes seconds to open);
    // test/support/setup.ts empties it before each file.
    isolate: false,
    maxWorkers: 2,
    setupFiles: ['test/support/setup.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Timeouts catch hangs, not slowness: CI machines here differ fourfold in speed, and on a slow
    // one with both workers busy a test that spawns servers or restarts the app can take a minute.
    testTimeout: 180_000,
    hookTimeout: 240_000,
    reporters: ['default'],
  },
});
