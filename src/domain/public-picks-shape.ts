/**
 * The public endpoint's envelope (GET /api/public/picks/today; docs/API.md, "Public pick"),
 * declared once: its documented JSON Schema and example and its JSON derive from
 * PUBLIC_PICK_LIST (src/domain/resource-shape.ts). REST only: GraphQL's todayPicks is the list
 * of picks itself, so the declaration is never made a GraphQL type.
 */
import Type from 'typebox';
import { layoutExample, layoutJsonSchema, PUBLIC_PICK, type PublicPickJson } from './pick-shape.js';
import { component, dateTime, resource } from './resource-shape.js';

/** An item: the pick's PUBLIC_PICK layout, documented as the PublicPick schema. */
const PUBLIC_PICK_ITEM = component<PublicPickJson>('PublicPick', layoutJsonSchema(PUBLIC_PICK));

export const PUBLIC_PICK_LIST = resource(
  'PublicPickList',
  {
    // The public JSON is camelCase, as its picks are.
    generatedAt: dateTime({ json: 'generatedAt' }),
    count: Type.Integer({ minimum: 0 }),
    picks: Type.Array(PUBLIC_PICK_ITEM),
  },
  {
    description: "Today's picks (first published on the current UTC date), best post-tax edge first.",
    example: { generatedAt: new Date('2026-11-22T12:00:03.512Z'), count: 1, picks: [layoutExample(PUBLIC_PICK)] },
  },
);
