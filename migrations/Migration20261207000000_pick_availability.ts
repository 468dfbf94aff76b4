import { Migration } from '@mikro-orm/migrations';

/**
 * Pick availability (docs/API.md, "Availability"): whether a published engine pick's own offer
 * can still be bet, checked at every odds poll until kickoff. Existing picks start `unknown`.
 * pick_availability_changes keeps every change of status (the record's availability figures are
 * made from it at settlement, into the three availability_* columns the track record reads).
 * The outbox gains the event of a change.
 */
export class Migration20261207000000PickAvailability extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table picks
        add column availability_status text not null default 'unknown',
        add column availability_odds_now numeric(10,4) null,
        add column availability_edge_pct_now numeric(12,4) null,
        add column availability_checked_at timestamptz null,
        add column availability_since timestamptz null,
        add column best_odds_since_published numeric(10,4) null,
        add column availability_at_5_min text null,
        add column availability_at_30_min text null,
        add column available_minutes numeric(12,3) null`);
    this.addSql(`alter table picks add constraint picks_availability_status_check check (availability_status in ('unknown', 'available', 'moved', 'gone'))`);
    this.addSql(`
      create table pick_availability_changes (
        pick_id uuid not null references picks (id) on delete cascade,
        at timestamptz not null,
        status text not null check (status in ('available', 'moved', 'gone')),
        odds_now numeric(10,4) null,
        edge_pct_now numeric(12,4) null,
        primary key (pick_id, at)
      )`);
    this.addSql('alter table outbox_events drop constraint outbox_events_type_check');
    this.addSql(`alter table outbox_events add constraint outbox_events_type_check check (type in ('pick.published', 'pick.settled', 'pick.availability_changed'))`);
  }

  override async down(): Promise<void> {
    // The older code knows no such event or webhook type: their deliveries (attempts cascade),
    // the type in subscriptions, and the subscriptions left with no type go first.
    this.addSql("delete from webhook_deliveries where event_id in (select id from outbox_events where type = 'pick.availability_changed')");
    this.addSql("update webhook_subscriptions set events = events - 'pick.availability_changed' where events ? 'pick.availability_changed'");
    this.addSql("delete from webhook_deliveries where subscription_id in (select id from webhook_subscriptions where events = '[]'::jsonb)");
    this.addSql("delete from webhook_subscriptions where events = '[]'::jsonb");
    this.addSql("delete from outbox_events where type = 'pick.availability_changed'");
    this.addSql('alter table outbox_events drop constraint outbox_events_type_check');
    this.addSql(`alter table outbox_events add constraint outbox_events_type_check check (type in ('pick.published', 'pick.settled'))`);
    this.addSql('drop table pick_availability_changes');
    this.addSql(`
      alter table picks
        drop column availability_status, drop column availability_odds_now, drop column availability_edge_pct_now,
        drop column availability_checked_at, drop column availability_since, drop column best_odds_since_published,
        drop column availability_at_5_min, drop column availability_at_30_min, drop column available_minutes`);
  }
}
