/**
 * The match analysis (docs/API.md, "Match analysis"), declared once: its record type, the GraphQL
 * MatchAnalysis, the documented JSON Schema and example, the REST selection and JSON all derive
 * from MATCH_ANALYSIS (src/domain/resource-shape.ts).
 */
import Type from 'typebox';
import { PICK_FIELDS } from './pick-shape.js';
import { dateTime, resource } from './resource-shape.js';

export const MATCH_ANALYSIS = resource(
  'MatchAnalysis',
  {
    matchId: Type.String({ format: 'uuid', graphqlType: 'ID', description: 'Equals the pick id.' }),
    analysis: Type.String({ description: 'Analysis text (up to 20,000 characters, may span lines).' }),
    createdAt: dateTime(),
    // Operators see when it was last rewritten; the documented JSON has only created_at.
    updatedAt: dateTime({ json: false }),
  },
  {
    example: {
      matchId: PICK_FIELDS.id.example,
      analysis: 'Arsenal should control midfield.',
      createdAt: new Date('2026-11-30T09:00:00.000Z'),
      updatedAt: new Date('2026-11-30T09:00:00.000Z'),
    },
  },
);
