import type { Clock } from '../domain/clock.js';
import type { EdgeTierThresholds } from '../domain/odds.js';
import type { Orm } from '../persistence/orm.js';
import { MatchAnalysisService } from './analyses.js';
import { ApiKeyService } from './api-keys.js';
import { AuthService } from './auth.js';
import { PickService } from './picks.js';
import { TrackRecordService } from './track-record.js';

export interface Services {
  picks: PickService;
  analyses: MatchAnalysisService;
  trackRecord: TrackRecordService;
  apiKeys: ApiKeyService;
  auth: AuthService;
}

export interface ServiceOptions {
  defaultTaxRate: number;
  adminToken: string;
  edgeTierThresholds?: EdgeTierThresholds;
  onVisibleChange?: () => void;
}

export function createServices(orm: Orm, clock: Clock, options: ServiceOptions): Services {
  const apiKeys = new ApiKeyService(orm, clock);
  return {
    picks: new PickService(orm, clock, options),
    analyses: new MatchAnalysisService(orm, clock),
    trackRecord: new TrackRecordService(orm, clock),
    apiKeys,
    auth: new AuthService(apiKeys, options.adminToken),
  };
}
