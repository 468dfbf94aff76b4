import type { PollPurpose } from '../../domain/feed-credits.js';
import type { FeedBudgetView } from '../../services/value-engine/credit-budget.js';
import { builder } from '../builder.js';
import { upperEnumValues } from './enums.js';

const FeedCreditSourceEnum = builder.enumType('FeedCreditSource', {
  description: "FEED: the feed's own x-requests-* headers this month (every client of the key counts); COUNTED: the requests' cost by v4's formula.",
  values: upperEnumValues(['feed', 'counted'] as const),
});

const PollPurposeEnum = builder.enumType('FeedPollPurpose', {
  description: 'CLOSING: the odds poll before a kickoff with an open pick, paid from the reserve first; ROUTINE: the plan that follows the kickoffs; SCORES: while a pick waits for its final.',
  values: upperEnumValues(['closing', 'routine', 'scores'] as const satisfies readonly PollPurpose[]),
});

const FeedBudgetStopRef = builder.objectRef<NonNullable<FeedBudgetView['stopped']>>('FeedBudgetStop').implement({
  description: 'Polls stopped for the month: the feed reported no credits left. A new month or a change of ODDS_FEED_MONTHLY_CREDITS lifts it.',
  fields: (t) => ({
    reason: t.exposeString('reason', { description: 'feed_reports_no_credits' }),
    at: t.expose('at', { type: 'DateTime' }),
  }),
});

const FeedNextPollRef = builder.objectRef<FeedBudgetView['nextPolls'][number]>('FeedNextPoll').implement({
  description: "A sport's next planned polls; null: nothing planned in the week ahead (no kickoff in the horizon, no pick waiting for its final, or no credits).",
  fields: (t) => ({
    sportKey: t.exposeString('sportKey'),
    odds: t.expose('odds', { type: 'DateTime', nullable: true }),
    oddsPurpose: t.field({ type: PollPurposeEnum, nullable: true, resolve: (next) => next.oddsPurpose }),
    scores: t.expose('scores', { type: 'DateTime', nullable: true }),
  }),
});

const FeedBudgetRef = builder.objectRef<FeedBudgetView>('FeedBudget').implement({
  description: 'The odds feed\'s monthly credit budget (ODDS_FEED_MONTHLY_CREDITS) this UTC month (docs/VALUE_ENGINE.md, "Feed credits").',
  fields: (t) => ({
    month: t.exposeString('month', { description: 'YYYY-MM, UTC.' }),
    monthEndsAt: t.expose('monthEndsAt', { type: 'DateTime' }),
    monthlyCredits: t.exposeInt('monthlyCredits'),
    reserveCredits: t.exposeInt('reserveCredits', { description: 'Kept for closing-line polls (ODDS_FEED_CREDIT_RESERVE).' }),
    reserveLeft: t.exposeInt('reserveLeft'),
    usedCredits: t.exposeInt('usedCredits'),
    remainingCredits: t.exposeInt('remainingCredits', { description: "The budget less the used credits, never more than the feed's x-requests-remaining." }),
    source: t.field({ type: FeedCreditSourceEnum, resolve: (view) => view.source }),
    projectedMonthCredits: t.exposeInt('projectedMonthCredits', { description: "Used credits plus the week's plan extrapolated to the month's end, at most the budget." }),
    oddsCreditsPerPoll: t.exposeInt('oddsCreditsPerPoll', { description: 'Markets x regions: what one odds poll of one sport costs.' }),
    stopped: t.field({ type: FeedBudgetStopRef, nullable: true, resolve: (view) => view.stopped }),
    planning: t.exposeBoolean('planning', {
      description: 'Whether the instance that answered polls the feed (holds its lease): only its nextPolls are the plan. False: nextPolls is empty; another instance plans.',
    }),
    nextPolls: t.field({ type: [FeedNextPollRef], resolve: (view) => view.nextPolls }),
    scheduleReadAt: t.expose('scheduleReadAt', {
      type: 'DateTime',
      nullable: true,
      description: "The oldest of the sports' last reads of the events list (this instance's); null before the first: the plan then knows no kickoff.",
    }),
  }),
});

builder.queryFields((t) => ({
  feedBudget: t.field({
    type: FeedBudgetRef,
    nullable: true,
    description: 'The odds feed\'s credit budget, the month\'s use and the next planned polls; null without ODDS_FEED_MONTHLY_CREDITS. Admin only.',
    authScopes: { admin: true },
    complexity: 10,
    resolve: (_root, _args, context) => context.services.feedBudget?.currentView() ?? null,
  }),
}));
