import { Migration } from '@mikro-orm/migrations';

/**
 * The value engine (docs/VALUE_ENGINE.md):
 * - picks remember the feed event they came from and how they were found (provenance); at most
 *   one pick per (event, market, selection), ever, enforced by a unique index, so repeated polls,
 *   a second instance or a restart can never duplicate one; `discarded` joins the statuses;
 * - odds_events: the feed's events as last seen, with the reference's latest pre-kickoff fair
 *   prices (the closing line) and the final score;
 * - odds_latest / odds_history: every bookmaker's last price per outcome, and a row per change;
 * - engine_leases: who polls the feed (one instance per deployment).
 */
export class Migration20261127000000ValueEngine extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table picks add column event_id text, add column provenance jsonb`);
    this.addSql(`alter table picks drop constraint picks_status_check`);
    this.addSql(`alter table picks add constraint picks_status_check check (status in ('published', 'settled', 'admin_review', 'discarded'))`);
    this.addSql(`create unique index picks_event_selection_unique on picks (event_id, market, selection) where event_id is not null`);
    this.addSql(`create index picks_review_queue_idx on picks (created_at, id) where status = 'admin_review'`);
    this.addSql(`create index picks_open_event_idx on picks (event_id) where event_id is not null and status in ('published', 'admin_review')`);
    this.addSql(`
      create table odds_events (
        id text primary key,
        sport_key text not null,
        sport text not null,
        league text not null,
        home_team text not null,
        away_team text not null,
        commence_time timestamptz not null,
        reference_fair jsonb,
        reference_updated_at timestamptz,
        completed boolean not null default false,
        home_score integer,
        away_score integer,
        overdue_logged_at timestamptz,
        created_at timestamptz not null,
        updated_at timestamptz not null
      )`);
    this.addSql(`create index odds_events_commence_idx on odds_events (commence_time)`);
    this.addSql(`
      create table odds_latest (
        event_id text not null,
        bookmaker text not null,
        outcome text not null,
        price numeric(10,4) not null,
        at timestamptz not null,
        primary key (event_id, bookmaker, outcome)
      )`);
    this.addSql(`
      create table odds_history (
        event_id text not null,
        bookmaker text not null,
        outcome text not null,
        price numeric(10,4) not null,
        at timestamptz not null
      )`);
    this.addSql(`create index odds_history_event_idx on odds_history (event_id, at)`);
    this.addSql(`create index odds_history_at_idx on odds_history (at)`);
    this.addSql(`
      create table engine_leases (
        name text primary key,
        holder text not null,
        expires_at timestamptz not null
      )`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table engine_leases');
    this.addSql('drop table odds_history');
    this.addSql('drop table odds_latest');
    this.addSql('drop table odds_events');
    this.addSql('drop index picks_open_event_idx');
    this.addSql('drop index picks_review_queue_idx');
    this.addSql('drop index picks_event_selection_unique');
    this.addSql(`delete from picks where status = 'discarded'`);
    this.addSql(`alter table picks drop constraint picks_status_check`);
    this.addSql(`alter table picks add constraint picks_status_check check (status in ('published', 'settled', 'admin_review'))`);
    this.addSql('alter table picks drop column provenance, drop column event_id');
  }
}
