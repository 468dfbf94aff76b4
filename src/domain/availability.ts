/**
 * Availability (docs/API.md, "Availability"): whether a published engine pick's own offer can
 * still be bet at value, from publication to kickoff, and what the track record counts of it.
 * Pure: the engine reads each poll's sighting of the offer (sightOffer, value-detection.ts) and
 * stores what these rules make of it.
 */
import { roundTo } from './numbers.js';
import { postTaxEdgeFraction } from './odds.js';
import type { AvailabilityStatus } from './pick.js';
import type { PickRecord } from './pick-shape.js';
import type { OfferSighting } from './value-detection.js';

export interface Availability {
  status: AvailabilityStatus;
  /** The book's price at the last check; null before it and while gone. */
  oddsNow: number | null;
  /** Post-tax edge of that price in percent, 4 decimals; null when oddsNow is. */
  edgePctNow: number | null;
  checkedAt: Date | null;
  /** When the current status began; null while unknown. */
  since: Date | null;
  /** The highest price quoted for the offer since publication. */
  bestOdds: number | null;
}

/** The pick's own fields of its availability (src/domain/pick-shape.ts). */
export type AvailabilityFields = Pick<
  PickRecord,
  'availabilityStatus' | 'availabilityOddsNow' | 'availabilityEdgePctNow' | 'availabilityCheckedAt' | 'availabilitySince' | 'bestOddsSincePublished'
>;

export function availabilityFields(availability: Availability): AvailabilityFields {
  return {
    availabilityStatus: availability.status,
    availabilityOddsNow: availability.oddsNow,
    availabilityEdgePctNow: availability.edgePctNow,
    availabilityCheckedAt: availability.checkedAt,
    availabilitySince: availability.since,
    bestOddsSincePublished: availability.bestOdds,
  };
}

export function availabilityOf(pick: AvailabilityFields): Availability {
  return {
    status: pick.availabilityStatus,
    oddsNow: pick.availabilityOddsNow,
    edgePctNow: pick.availabilityEdgePctNow,
    checkedAt: pick.availabilityCheckedAt,
    since: pick.availabilitySince,
    bestOdds: pick.bestOddsSincePublished,
  };
}

/** The row kept for a pick's change of status, as it began (`since`). */
export function availabilityChange(pickId: string, availability: Availability): { pickId: string; at: Date; status: ObservedStatus; oddsNow: number | null; edgePctNow: number | null } {
  if (availability.status === 'unknown' || availability.since === null) throw new RangeError('only an observed status is kept as a change');
  return { pickId, at: availability.since, status: availability.status, oddsNow: availability.oddsNow, edgePctNow: availability.edgePctNow };
}

/** A status the engine observed (unknown is only ever the absence of a check). */
export type ObservedStatus = Exclude<AvailabilityStatus, 'unknown'>;

/**
 * The availability an engine pick is published with, from the pick as stored (its edge as a
 * reader recomputes it from the stored prices, to the 4 decimals of every check): the poll that
 * found it is its first check, dated by the publication itself, and detection published it
 * because its edge reached the minimum.
 */
export function availabilityAtPublication(pick: { odds: number; referenceFairOdds: number; taxRate: number }, publishedAt: Date): Availability {
  const edgePctNow = edgePercent(postTaxEdgeFraction(pick.odds, pick.referenceFairOdds, pick.taxRate));
  return { status: 'available', oddsNow: pick.odds, edgePctNow, checkedAt: publishedAt, since: publishedAt, bestOdds: pick.odds };
}

/**
 * The availability after one poll's sighting of the offer. `gone` is a check (the book or the
 * event no longer quotes it); a quote the engine cannot judge (no fair price, or a market it
 * would not trust) is not: nothing changes, the best price included, so one bad quote never
 * becomes the best price. `changed` says whether the status changed (one event per change).
 */
export function nextAvailability(current: Availability, sighting: OfferSighting, minEdge: number, now: Date): { next: Availability; changed: boolean } {
  if (sighting.kind === 'unpriced') return { next: current, changed: false };
  const bestOdds = sighting.kind === 'gone' ? current.bestOdds : Math.max(current.bestOdds ?? sighting.price, sighting.price);
  const status: ObservedStatus = sighting.kind === 'gone' ? 'gone' : sighting.edgePostTax >= minEdge ? 'available' : 'moved';
  const changed = status !== current.status;
  return {
    next: {
      status,
      oddsNow: sighting.kind === 'gone' ? null : sighting.price,
      edgePctNow: sighting.kind === 'gone' ? null : edgePercent(sighting.edgePostTax),
      checkedAt: now,
      since: changed || current.since === null ? now : current.since,
      bestOdds,
    },
    changed,
  };
}

function edgePercent(edgePostTax: number): number {
  return roundTo(edgePostTax * 100, 4);
}

/** A change of status as kept (pick_availability_changes), oldest first. */
export interface AvailabilityChange {
  status: ObservedStatus;
  at: Date;
}

/** The minutes after publication the record reads a pick's status at. */
export const AVAILABILITY_CHECKPOINTS_MINUTES = [5, 30] as const;

/** What the track record counts of one settled engine pick (fixed at settlement: kickoff has passed). */
export interface PickAvailabilityRecord {
  /** The status 5 and 30 minutes after publication, or at kickoff if that came first. */
  at5Min: AvailabilityStatus;
  at30Min: AvailabilityStatus;
  /** Minutes from publication until the status first left `available`, or until kickoff (censored there); 0 if never available. */
  minutesAvailable: number;
}

const MINUTE_MS = 60_000;

/** The status at `at`: the last change at or before it; unknown before the first. */
export function statusAt(changes: readonly AvailabilityChange[], at: Date): AvailabilityStatus {
  let status: AvailabilityStatus = 'unknown';
  for (const change of changes) {
    if (change.at.getTime() > at.getTime()) break;
    status = change.status;
  }
  return status;
}

/**
 * One pick's figures from its changes, publication and kickoff; null for a pick whose
 * availability was not known from its publication on: published by hand, approved by an
 * operator (checked only from the next poll), or published before availability existed.
 */
export function pickAvailabilityRecord(changes: readonly AvailabilityChange[], publishedAt: Date, kickoffAt: Date): PickAvailabilityRecord | null {
  const end = Math.max(publishedAt.getTime(), kickoffAt.getTime());
  const before = changes.filter((change) => change.at.getTime() <= end).sort((a, b) => a.at.getTime() - b.at.getTime());
  if (before.length === 0 || before[0]!.at.getTime() > publishedAt.getTime()) return null;
  const checkpoint = (minutes: number) => statusAt(before, new Date(Math.min(publishedAt.getTime() + minutes * MINUTE_MS, end)));
  const [five, thirty] = AVAILABILITY_CHECKPOINTS_MINUTES;
  let minutesAvailable = 0;
  if (statusAt(before, publishedAt) === 'available') {
    const left = before.find((change) => change.at.getTime() > publishedAt.getTime() && change.status !== 'available');
    minutesAvailable = roundTo(((left?.at.getTime() ?? end) - publishedAt.getTime()) / MINUTE_MS, 3);
  }
  return { at5Min: checkpoint(five), at30Min: checkpoint(thirty), minutesAvailable };
}
