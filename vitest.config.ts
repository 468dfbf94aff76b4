import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // graphql 16 ships CommonJS (main) and ESM (module) copies. Node loads the CommonJS one
    // for the libraries; make the project's own imports use the same copy, as in production,
    // so `instanceof GraphQLError` and schema identity hold in tests.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // PGlite boots a WASM PostgreSQL per test file; give slow machines room.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
