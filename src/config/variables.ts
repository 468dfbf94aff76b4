/**
 * The machinery behind the configuration table of src/config.ts: a variable row, and the
 * resolver that reads rows from an environment (each once, lazily, in the order asked) and
 * remembers where each value came from, for `npm run config`.
 */
import { ConfigError, type Kind } from './kinds.js';

export type Env = Record<string, string | undefined>;

export interface LoadConfigOptions {
  /** The migrate command needs neither an admin token nor the webhook secret key. */
  requireAdminToken?: boolean;
}

/** What a row's rules may ask of the others. */
export interface Context {
  /** Another variable's value (resolved on first use). */
  get<V>(name: string): V;
  /** Another variable's text, trimmed; undefined when unset or blank. */
  raw(name: string): string | undefined;
  readonly options: LoadConfigOptions;
}

/** A default that depends on the mode: the value, and the mode that chose it (shown by `npm run config`). */
export interface Fallback<D> {
  value: D;
  mode?: string;
}

export class ByMode<D> {
  constructor(
    /** The docs' Default column. */
    readonly doc: string,
    readonly resolve: (ctx: Context) => Fallback<D>,
  ) {}
}

export function byMode<D>(doc: string, resolve: (ctx: Context) => Fallback<D>): ByMode<D> {
  return new ByMode(doc, resolve);
}

export interface Variable<T, D = T> {
  section: string;
  /** One line: what it does, for the docs' Meaning column. */
  description: string;
  kind: Kind<T>;
  /** The value when unset: a constant (null: none), or one by mode. */
  default: D | ByMode<D>;
  /** The docs' Default column, when the constant alone says too little. */
  defaultDoc?: string;
  /** Never printed: `npm run config` shows `[redacted]`. */
  secret?: boolean;
  /** Read only by this command (not by loadConfig). */
  command?: string;
  /** A refusal before the text is read (raw undefined when unset): the problem, or null. */
  refuse?: (raw: string | undefined, ctx: Context) => string | null;
  /** A refusal of the value, default included, against the others: the problem, or null. */
  check?: (value: T | D, ctx: Context) => string | null;
}

/** Declares a row; the value's type follows from its kind and default. */
export function variable<T, D = T>(row: Variable<T, D>): Variable<T, D> {
  return row;
}

export type Table = Record<string, Variable<any, any>>;
export type Values<R extends Table> = { [K in keyof R]: R[K] extends Variable<infer T, infer D> ? T | D : never };

export interface Setting {
  name: string;
  value: unknown;
  /** `env`, `default` or `default (<mode>)`. */
  source: string;
}

export interface Resolver<R extends Table> {
  get<K extends keyof R & string>(name: K): Values<R>[K];
  setting(name: keyof R & string): Setting;
}

export function trimmed(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim();
  return raw === '' ? undefined : raw;
}

/** Reads `table` from `env`: every variable at most once, on first use; a refusal is a ConfigError. */
export function resolver<R extends Table>(table: R, env: Env, options: LoadConfigOptions = {}): Resolver<R> {
  const settings = new Map<string, Setting | ConfigError>();
  const pending = new Set<string>();
  const setting = (name: string): Setting => {
    const known = settings.get(name);
    if (known instanceof ConfigError) throw known;
    if (known) return known;
    const row = table[name];
    if (!row) throw new Error(`src/config.ts declares no variable ${name}`);
    if (pending.has(name)) throw new Error(`configuration variable ${name} depends on itself`);
    pending.add(name);
    try {
      const resolved = read(name, row);
      settings.set(name, resolved);
      return resolved;
    } catch (error) {
      if (error instanceof ConfigError) settings.set(name, error);
      throw error;
    } finally {
      pending.delete(name);
    }
  };
  const ctx: Context = { get: <V>(name: string) => setting(name).value as V, raw: (name) => trimmed(env, name), options };
  const fallback = (row: Variable<unknown, unknown>): Fallback<unknown> => {
    const chosen = row.default instanceof ByMode ? row.default.resolve(ctx) : { value: row.default };
    // Each load gets its own copy: a caller changing its config changes no later one.
    return { ...chosen, value: structuredClone(chosen.value) };
  };
  const read = (name: string, row: Variable<unknown, unknown>): Setting => {
    const raw = trimmed(env, name);
    const refusal = row.refuse?.(raw, ctx);
    if (refusal) throw new ConfigError(name, refusal);
    let resolved: Setting;
    if (raw === undefined) {
      const { value, mode } = fallback(row);
      resolved = { name, value, source: mode ? `default (${mode})` : 'default' };
    } else {
      resolved = { name, value: row.kind.parse(raw, name, row.kind.merges ? fallback(row).value : undefined), source: 'env' };
    }
    const problem = row.check?.(resolved.value, ctx);
    if (problem) throw new ConfigError(name, problem);
    return resolved;
  };
  return { get: (name) => setting(name).value as never, setting };
}
