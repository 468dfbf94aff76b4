/**
 * Embedded-mode conveniences kept under DATA_DIR: a generated admin token that survives
 * restarts, the demo keys created by the first start's seed, and the demo account's sign-in
 * (demo data only).
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { generateSignerKey, NOTE_ALGORITHM_ED25519, parseSignerKey, type SignerKey } from './domain/signed-note.js';

export const ADMIN_TOKEN_FILE = 'admin-token';
export const DEMO_KEYS_FILE = 'demo-keys.json';
export const DEMO_ACCOUNT_FILE = 'demo-account.json';
/** The demo account's email: example.com is reserved for examples (RFC 2606), so it is nobody's. */
export const DEMO_ACCOUNT_EMAIL = 'demo@example.com';
const WEBHOOK_KEY_FILE = 'webhook-secret-key';
export const LEDGER_KEY_FILE = 'ledger-signing-key';

/**
 * DATA_DIR holds the database (the dashboard's signing secret and webhook secrets among it),
 * the admin token and the webhook secret key: only the service's own user may read it. New
 * files are created 0600 and folders 0700 (umask 077 for the process), and what an earlier
 * version left readable to others is tightened at start. Links are not followed.
 */
export function secureDataDir(dataDir: string): void {
  process.umask(0o077);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const tighten = (target: string) => {
    const stat = lstatSync(target);
    if (stat.isSymbolicLink()) return;
    if ((stat.mode & 0o077) !== 0) chmodSync(target, stat.mode & 0o700);
    if (stat.isDirectory()) for (const entry of readdirSync(target)) tighten(path.join(target, entry));
  };
  tighten(dataDir);
}

/** The key that encrypts webhook secrets in the embedded database, kept beside it (0600). */
export function embeddedWebhookSecretKey(dataDir: string): Buffer {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, WEBHOOK_KEY_FILE);
  if (existsSync(file)) return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  const key = randomBytes(32);
  writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600 });
  return key;
}

/**
 * The key that signs the embedded ledger's checkpoints, kept beside its database (0600) and named
 * after the origin. A key of another name, or of the wrong form, is refused rather than replaced:
 * verifiers pinned it. (A missing file makes a new key, which the start refuses when the
 * database holds checkpoints of another key: LedgerLog.checkKey.)
 */
export function embeddedLedgerSigningKey(dataDir: string, origin: string): SignerKey {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, LEDGER_KEY_FILE);
  if (!existsSync(file)) writeFileSync(file, `${generateSignerKey(origin)}\n`, { mode: 0o600 });
  let key: SignerKey;
  try {
    key = parseSignerKey(readFileSync(file, 'utf8'), [NOTE_ALGORITHM_ED25519]);
  } catch (error) {
    throw new Error(`Invalid configuration: the ledger key in ${file} is not an Ed25519 signed-note private key (${(error as Error).message}); restore it from a copy (replacing it on purpose: LEDGER_PREVIOUS_KEY_ID)`);
  }
  if (key.name !== origin) {
    throw new Error(`Invalid configuration: LEDGER_ORIGIN is "${origin}" but the ledger key in ${file} is named "${key.name}"; set LEDGER_ORIGIN=${key.name} (a new log under another origin is a new DATA_DIR)`);
  }
  return key;
}

/**
 * True when DATA_DIR already holds an embedded database (PGlite writes PG_VERSION when it creates
 * one): read before the start opens it, so the banner can say the data were reused.
 */
export function embeddedDatabaseExists(dataDir: string): boolean {
  return existsSync(path.join(dataDir, 'PG_VERSION'));
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

export interface DemoAccount {
  email: string;
  password: string;
}

/**
 * The demo account's sign-in, generated once and kept beside the admin token (0600): the
 * dashboard can be tried at once, and a restart keeps the same password. `generated` says
 * whether this call made it (the account is then created with it).
 */
export function embeddedDemoAccount(dataDir: string): DemoAccount & { generated: boolean } {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, DEMO_ACCOUNT_FILE);
  if (existsSync(file)) {
    try {
      const saved = JSON.parse(readFileSync(file, 'utf8')) as Partial<DemoAccount>;
      if (typeof saved.email === 'string' && typeof saved.password === 'string') return { email: saved.email, password: saved.password, generated: false };
    } catch {
      // An unreadable file is replaced below, as a missing one.
    }
  }
  const account = { email: DEMO_ACCOUNT_EMAIL, password: randomBytes(18).toString('base64url') };
  writeFileSync(file, `${JSON.stringify(account, null, 2)}\n`, { mode: 0o600 });
  return { ...account, generated: true };
}
