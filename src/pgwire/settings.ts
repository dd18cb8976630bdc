/**
 * The session's settings as clients see them: the ParameterStatus values sent at start-up, and
 * SET, SHOW and RESET of the settings clients send (psql, JDBC and the BI tools set several on
 * connecting). A setting that would change how values are written (a time zone other than UTC, a
 * date style other than ISO, fewer float digits) is refused: vdb writes values one way, and a
 * setting silently ignored would give other text than PostgreSQL gives under it.
 */
import { WireError } from './errors.js';

/** The version clients are told (JDBC and others read features from it). */
export const SERVER_VERSION = '15.0';

/** Settings a client is sent ParameterStatus for, at start-up and when they change. */
const REPORTED = new Set([
  'server_version',
  'server_encoding',
  'client_encoding',
  'application_name',
  'DateStyle',
  'IntervalStyle',
  'TimeZone',
  'integer_datetimes',
  'standard_conforming_strings',
  'is_superuser',
  'session_authorization',
]);

/** Each setting's canonical name (settings are case-insensitive). */
const canonical = (name: string): string => {
  const lower = name.toLowerCase();
  for (const known of REPORTED) if (known.toLowerCase() === lower) return known;
  return lower;
};

/** The only values some settings may take, by their canonical name: a test of the value given. */
const FIXED: Record<string, { accepts: (value: string) => boolean; why: string }> = {
  client_encoding: { accepts: (v) => /^(utf-?8|unicode)$/i.test(v), why: 'vdb speaks UTF8 only' },
  server_encoding: { accepts: () => false, why: 'it is fixed' },
  DateStyle: {
    accepts: (v) => /^\s*iso\s*(,\s*(mdy|dmy|ymd)\s*)?$/i.test(v) || /^\s*(mdy|dmy|ymd)\s*,\s*iso\s*$/i.test(v),
    why: 'vdb writes dates in the ISO style only',
  },
  IntervalStyle: { accepts: (v) => /^postgres$/i.test(v), why: 'vdb writes intervals in the postgres style only' },
  TimeZone: {
    accepts: (v) => /^(utc|gmt|etc\/utc|etc\/gmt|zulu|z|[+-]?0+(:00)?)$/i.test(v),
    why: 'vdb writes timestamps with time zone in UTC only',
  },
  standard_conforming_strings: { accepts: (v) => /^(on|true|1|yes)$/i.test(v), why: "vdb's strings are standard-conforming" },
  extra_float_digits: { accepts: (v) => /^[1-3]$/.test(v.trim()), why: 'vdb writes floats in the shortest exact form (values 1 to 3)' },
  integer_datetimes: { accepts: () => false, why: 'it is fixed' },
  server_version: { accepts: () => false, why: 'it is fixed' },
  transaction_isolation: { accepts: (v) => /^read committed$/i.test(v), why: 'vdb runs no transactions' },
  default_transaction_read_only: { accepts: () => true, why: '' },
  statement_timeout: { accepts: (v) => durationMs(v) !== null, why: 'it takes a duration (5000, 5s, 1min)' },
  // Seconds a local copy may lag behind its source for a statement to read it; 0: every table live (docs/copies.md).
  'vdb.max_staleness': {
    accepts: (v) => v.trim() === '' || durationMs(v, 1000) !== null,
    why: "it takes seconds or a duration (60, 10min, 1h; 0: live; '': each copy's own bound)",
  },
};

/** The longest timer Node keeps (about 24.8 days). */
const MAX_TIMEOUT_MS = 2_147_483_647;
const UNIT_MS: Record<string, number> = { '': 1, ms: 1, s: 1000, min: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration setting's milliseconds (`5000`, `5s`, `'1min'`; a number without unit counts `plainMs` each), or null for another text. */
function durationMs(text: string, plainMs = 1): number | null {
  const match = /^\s*(\d+)\s*(ms|s|min|h|d)?\s*$/i.exec(text);
  if (!match) return null;
  const unit = match[2] ? UNIT_MS[match[2].toLowerCase()]! : plainMs;
  return Math.min(MAX_TIMEOUT_MS, Number(match[1]) * unit);
}

export class SessionSettings {
  private readonly values = new Map<string, string>();
  private readonly defaults: Map<string, string>;

  constructor(user: string, startup: ReadonlyMap<string, string>) {
    this.defaults = new Map([
      ['server_version', SERVER_VERSION],
      ['server_encoding', 'UTF8'],
      ['client_encoding', 'UTF8'],
      ['application_name', ''],
      ['DateStyle', 'ISO, MDY'],
      ['IntervalStyle', 'postgres'],
      ['TimeZone', 'UTC'],
      ['integer_datetimes', 'on'],
      ['standard_conforming_strings', 'on'],
      ['is_superuser', 'off'],
      ['session_authorization', user],
      ['extra_float_digits', '1'],
      ['search_path', '"$user", public'],
      ['transaction_isolation', 'read committed'],
      ['statement_timeout', '0'],
      ['vdb.max_staleness', ''],
    ]);
    for (const [name, value] of startup) {
      if (name === 'user' || name === 'database' || name === 'replication' || name === 'options') continue;
      this.set(name, value);
    }
  }

  /** The value of `name`, or null for a setting vdb does not know. */
  get(name: string): string | null {
    const key = canonical(name);
    return this.values.get(key) ?? this.defaults.get(key) ?? null;
  }

  /** Sets `name`; returns the ParameterStatus to send, if the setting is one clients are told of. */
  set(name: string, value: string): [string, string] | null {
    const key = canonical(name);
    const rule = FIXED[key];
    if (rule && !rule.accepts(value)) {
      throw new WireError('0A000', `vdb cannot set ${key} to "${value}": ${rule.why}.`, `SHOW ${key} gives the value vdb uses.`);
    }
    // The fixed ones keep their canonical spelling (UTF8, UTC, ISO, MDY); a duration its text.
    const stored = rule && key !== 'statement_timeout' && key !== 'vdb.max_staleness' ? (this.defaults.get(key) ?? value) : value;
    this.values.set(key, stored);
    return REPORTED.has(key) ? [key, stored] : null;
  }

  /** Resets `name` (null: every setting); returns the ParameterStatus messages to send. */
  reset(name: string | null): Array<[string, string]> {
    const keys = name === null ? [...this.values.keys()] : [canonical(name)];
    const changed: Array<[string, string]> = [];
    for (const key of keys) {
      this.values.delete(key);
      if (REPORTED.has(key)) changed.push([key, this.defaults.get(key) ?? '']);
    }
    return changed;
  }

  /**
   * The session's statement_timeout in milliseconds: as REST's timeout parameter, it replaces
   * queryTimeoutMs for the session's statements (a role's shorter limit still caps it); 0, the
   * default, leaves queryTimeoutMs (vdb has no statement without a timeout).
   */
  statementTimeoutMs(): number | null {
    const ms = durationMs(this.get('statement_timeout') ?? '0');
    return ms === null || ms === 0 ? null : ms;
  }

  /** The session's vdb.max_staleness in seconds (0: live), as REST's maxStaleness parameter; undefined when unset. */
  maxStalenessSeconds(): number | undefined {
    const text = this.get('vdb.max_staleness') ?? '';
    const ms = text.trim() === '' ? null : durationMs(text, 1000);
    return ms === null ? undefined : Math.floor(ms / 1000);
  }

  /** What start-up reports. */
  reported(): Array<[string, string]> {
    return [...REPORTED].map((name) => [name, this.get(name) ?? '']);
  }

  /** Every setting, for SHOW ALL. */
  all(): Array<[string, string]> {
    const names = new Set([...this.defaults.keys(), ...this.values.keys()]);
    return [...names].sort().map((name) => [name, this.get(name) ?? '']);
  }
}
