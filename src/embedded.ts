/**
 * Embedded-mode conveniences kept under DATA_DIR: a generated admin token that survives
 * restarts, and the demo keys created by the first start's seed (demo data only).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const ADMIN_TOKEN_FILE = 'admin-token';
const DEMO_KEYS_FILE = 'demo-keys.json';
const WEBHOOK_KEY_FILE = 'webhook-secret-key';

/** The key that encrypts webhook secrets in the embedded database, kept beside it (0600). */
export function embeddedWebhookSecretKey(dataDir: string): Buffer {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, WEBHOOK_KEY_FILE);
  if (existsSync(file)) return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  const key = randomBytes(32);
  writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600 });
  return key;
}

export function embeddedAdminToken(dataDir: string): string {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, ADMIN_TOKEN_FILE);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const token = randomBytes(24).toString('base64url');
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return token;
}

export type DemoKeys = Record<string, string>;

export function saveDemoKeys(dataDir: string, keys: DemoKeys): void {
  writeFileSync(path.join(dataDir, DEMO_KEYS_FILE), `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600 });
}

export function loadDemoKeys(dataDir: string): DemoKeys | null {
  const file = path.join(dataDir, DEMO_KEYS_FILE);
  if (!existsSync(file)) return null;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as DemoKeys;
  } catch {
    return null;
  }
}
