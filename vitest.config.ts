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
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
