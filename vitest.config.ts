import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

// Suites that need shared engines (several instances on one PostgreSQL and one Redis) are
// named *.real.test.ts and run only when both are configured, as in CI's second phase.
const realServices = Boolean(process.env.DATABASE_URL?.trim() && process.env.REDIS_URL?.trim());

// Real-services suites that start server processes (and private PostgreSQL / Redis servers)
// and assert timings: they run after all the others, one file at a time, so neither their
// load nor the others' disturbs timing-sensitive assertions.
const PROCESS_SUITES = ['test/integration/cluster.real.test.ts', 'test/integration/faults.real.test.ts'];

export default defineConfig({
  resolve: {
    // graphql 16 ships CommonJS (main) and ESM (module) copies. Node loads the CommonJS one
    // for the libraries; make the project's own imports use the same copy, as in production,
    // so `instanceof GraphQLError` and schema identity hold in tests.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    // PGlite boots a WASM PostgreSQL per test file; give slow machines room.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    globalSetup: ['test/global-setup.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'suites',
          include: ['test/**/*.test.ts'],
          // Browser tests run with `npm run test:browser` (vitest.browser.config.ts).
          exclude: ['test/browser/**', ...PROCESS_SUITES, ...(realServices ? [] : ['test/**/*.real.test.ts'])],
        },
      },
      ...(realServices
        ? [{ extends: true, test: { name: 'processes', include: PROCESS_SUITES, fileParallelism: false, sequence: { groupOrder: 1 } } }]
        : []),
    ],
  },
});
