/**
 * Once per `npm test` run: a migrated embedded database dumped to a file, from which every
 * PGlite scratch database of the run boots (test/helpers/database.ts). Booting a fresh
 * in-memory PGlite runs initdb inside the WASM, which is most of a test app's start.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { dumpMigratedPglite } from '../src/persistence/orm.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated PGlite data directory's dump, or '' on PostgreSQL runs. */
    pgliteTemplateFile: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  if (process.env.DATABASE_URL?.trim()) {
    project.provide('pgliteTemplateFile', '');
    return () => {};
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'picks-pglite-template-'));
  const file = path.join(dir, 'migrated.tar');
  writeFileSync(file, Buffer.from(await (await dumpMigratedPglite()).arrayBuffer()));
  project.provide('pgliteTemplateFile', file);
  return () => rmSync(dir, { recursive: true, force: true });
}
