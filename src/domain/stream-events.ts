/**
 * The names of the events the service sends on its streams, declared once: the streams write
 * them, and the AsyncAPI document (GET /api/v1/asyncapi.json) lists them. Webhook deliveries are
 * named by their event type (WEBHOOK_EVENT_TYPES). Pure.
 */

/** The REST picks stream's SSE event name for each event type it carries (docs/API.md, "Picks stream"). */
export const PICKS_STREAM_EVENT_NAMES = { 'pick.published': 'pick.published', 'pick.availability_changed': 'pick.availability' } as const;
export type PicksStreamEventType = keyof typeof PICKS_STREAM_EVENT_NAMES;

/** The public live feed's one SSE event (docs/API.md, "Public live feed"). */
export const PUBLIC_STREAM_EVENT_NAME = 'pick.published';

/** The picks stream's event name of an event type; a type it does not carry is a programming error. */
export function picksStreamEventName(type: string): string {
  const name = (PICKS_STREAM_EVENT_NAMES as Readonly<Record<string, string>>)[type];
  // pickFeed carries no other type: a new one must be named here before it is streamed.
  if (name === undefined) throw new Error(`the picks stream has no event name for ${type}`);
  return name;
}
