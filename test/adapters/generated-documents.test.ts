/**
 * The adapters' typed documents (adapters/common/generated/graphql.ts) are what GraphQL Code
 * Generator makes of the .graphql documents and schema.graphql today: a document edited
 * without `npm run codegen` fails here, as a stale schema.graphql fails in server.test.ts.
 */
import { readFileSync } from 'node:fs';
import { generate } from '@graphql-codegen/cli';
import { describe, expect, it } from 'vitest';
import config, { GENERATED_DOCUMENTS } from '../../adapters/codegen.js';

describe('adapters/common/generated/graphql.ts', () => {
  it('is what `npm run codegen` generates from the documents and schema.graphql', async () => {
    const outputs = await generate(config, false);
    expect(outputs.map((output: { filename: string }) => output.filename)).toEqual([GENERATED_DOCUMENTS]);
    expect(readFileSync(GENERATED_DOCUMENTS, 'utf8')).toBe(outputs[0]!.content);
  }, 60_000);
});
