import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/harness/globalSetup.ts'],
    include: ['test/**/*.test.ts'],
    exclude: ['node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: more parallel files only makes the browser tests slower.
    maxWorkers: 2,
  },
});
