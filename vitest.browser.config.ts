import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

// Browser tests (`npm run test:browser`): Debian's Chromium driven by playwright-core against
// the real app on 127.0.0.1. Kept out of `npm test` (vitest.config.ts excludes test/browser).
export default defineConfig({
  resolve: {
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/browser/**/*.browser.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
