/**
 * The one logger type of the services: pino's (the entry point's logger, which Fastify shares),
 * narrowed to the levels services use, so a test can hand in any object with these methods
 * (debug is optional: a routine line a test does not record is simply not logged).
 */
import type { Logger } from 'pino';

export type ServiceLog = Pick<Logger, 'error' | 'warn' | 'info'> & Partial<Pick<Logger, 'debug'>>;
