import { defineEntity, p } from '@mikro-orm/core';

/**
 * Durable monthly request count per key; the limiter flushes into it and re-seeds from it.
 * requestCount is the month's count; refundedCount the requests taken back from it.
 */
export const MonthlyUsageSchema = defineEntity({
  name: 'MonthlyUsage',
  tableName: 'monthly_usage',
  properties: {
    apiKeyId: p.uuid().primary(),
    month: p.text().primary(),
    requestCount: p.bigint('number'),
    refundedCount: p.bigint('number').default(0),
    updatedAt: p.datetime(),
  },
  checks: [
    { name: 'monthly_usage_month_check', expression: "month ~ '^[0-9]{4}-[0-9]{2}$'" },
    { name: 'monthly_usage_request_count_check', expression: 'request_count >= 0' },
    { name: 'monthly_usage_refunded_count_check', expression: 'refunded_count >= 0' },
  ],
});
export class MonthlyUsageEntity extends MonthlyUsageSchema.class {}
MonthlyUsageSchema.setClass(MonthlyUsageEntity);
