import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

// Suites that need shared engines (several instances on one PostgreSQL and one Redis) are
// named *.real.test.ts and run only when both are configured, as in CI's second phase.
const realServices = Boolean(process.env.DATABASE_URL?.trim() && process.env.REDIS_URL?.trim());

export default defineConfig({
  resolve: {
    // graphql 16 ships CommonJS (main) and ESM (module) copies. Node loads the CommonJS one
    // for the libraries; make the project's own imports use the same copy, as in production,
    // so `instanceof GraphQLError` and schema identity hold in tests.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    exclude: realServices ? [] : ['test/**/*.real.test.ts'],
    // PGlite boots a WASM PostgreSQL per test file; give slow machines room.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
