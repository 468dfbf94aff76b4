import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261122000000Initial } from './Migration20261122000000_initial.js';
import { Migration20261123000000Deployment } from './Migration20261123000000_deployment.js';
import { Migration20261123000100WebhookDispatch } from './Migration20261123000100_webhook_dispatch.js';
import { Migration20261124000000Accounts } from './Migration20261124000000_accounts.js';
import { Migration20261125000000TrackRecordDays } from './Migration20261125000000_track_record_days.js';
import { Migration20261126000000LogRetention } from './Migration20261126000000_log_retention.js';
import { Migration20261127000000ValueEngine } from './Migration20261127000000_value_engine.js';
import { Migration20261127100000WebhookRotation } from './Migration20261127100000_webhook_rotation.js';
import { Migration20261128000000SettlementSafety } from './Migration20261128000000_settlement_safety.js';
import { Migration20261129000000UsageRefunds } from './Migration20261129000000_usage_refunds.js';
import { Migration20261130000000StakeAdvice } from './Migration20261130000000_stake_advice.js';
import { Migration20261130100000PickLines } from './Migration20261130100000_pick_lines.js';
import { Migration20261201000000MarketLines } from './Migration20261201000000_market_lines.js';
import { Migration20261201100000TrackRecordMarkets } from './Migration20261201100000_track_record_markets.js';
import { Migration20261202000000StreamTokens } from './Migration20261202000000_stream_tokens.js';
import { Migration20261203000000ReferenceConsensus } from './Migration20261203000000_reference_consensus.js';
import { Migration20261204000000Ledger } from './Migration20261204000000_ledger.js';
import { Migration20261205000000RecordStatistics } from './Migration20261205000000_record_statistics.js';
import { Migration20261206000000ReferenceRefresh } from './Migration20261206000000_reference_refresh.js';
import { Migration20261207000000PickAvailability } from './Migration20261207000000_pick_availability.js';
import { Migration20261208000000FeedCredits } from './Migration20261208000000_feed_credits.js';

/** Every migration in order. Listed explicitly so the same code runs from src (tests) and dist (start). */
export const MIGRATIONS: MigrationObject[] = [
  { name: 'Migration20261122000000_initial', class: Migration20261122000000Initial },
  { name: 'Migration20261123000000_deployment', class: Migration20261123000000Deployment },
  { name: 'Migration20261123000100_webhook_dispatch', class: Migration20261123000100WebhookDispatch },
  { name: 'Migration20261124000000_accounts', class: Migration20261124000000Accounts },
  { name: 'Migration20261125000000_track_record_days', class: Migration20261125000000TrackRecordDays },
  { name: 'Migration20261126000000_log_retention', class: Migration20261126000000LogRetention },
  { name: 'Migration20261127000000_value_engine', class: Migration20261127000000ValueEngine },
  { name: 'Migration20261127100000_webhook_rotation', class: Migration20261127100000WebhookRotation },
  { name: 'Migration20261128000000_settlement_safety', class: Migration20261128000000SettlementSafety },
  { name: 'Migration20261129000000_usage_refunds', class: Migration20261129000000UsageRefunds },
  { name: 'Migration20261130000000_stake_advice', class: Migration20261130000000StakeAdvice },
  { name: 'Migration20261130100000_pick_lines', class: Migration20261130100000PickLines },
  { name: 'Migration20261201000000_market_lines', class: Migration20261201000000MarketLines },
  { name: 'Migration20261201100000_track_record_markets', class: Migration20261201100000TrackRecordMarkets },
  { name: 'Migration20261202000000_stream_tokens', class: Migration20261202000000StreamTokens },
  { name: 'Migration20261203000000_reference_consensus', class: Migration20261203000000ReferenceConsensus },
  { name: 'Migration20261204000000_ledger', class: Migration20261204000000Ledger },
  { name: 'Migration20261205000000_record_statistics', class: Migration20261205000000RecordStatistics },
  { name: 'Migration20261206000000_reference_refresh', class: Migration20261206000000ReferenceRefresh },
  { name: 'Migration20261207000000_pick_availability', class: Migration20261207000000PickAvailability },
  { name: 'Migration20261208000000_feed_credits', class: Migration20261208000000FeedCredits },
];
