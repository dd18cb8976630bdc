/**
 * Query parameters of the query and source endpoints (declared in schemas.ts), turned into
 * values once: a bad value is a 400 naming the parameter, never a silent default. A repeated
 * parameter counts with its last value; booleans take any case.
 */
import { badRequest } from '../errors.js';

export interface ResultParams {
  pagination: boolean;
  limit: number | undefined;
  offset: number | undefined;
  requestId: string | undefined;
  array: boolean;
  headers: boolean;
  timeoutMs: number;
  /** Seconds a local copy may lag behind its source to be read (0: live); unset: each copy's own bound. */
  maxStaleness: number | undefined;
}

type Query = Readonly<Record<string, unknown>>;

const single = (query: Query, name: string): string | undefined => {
  const value = query[name];
  const last: unknown = Array.isArray(value) ? value[value.length - 1] : value;
  return typeof last === 'string' ? last : undefined;
};

function boolParam(query: Query, name: string, fallback: boolean): boolean {
  const value = single(query, name);
  if (value === undefined || value === '') return fallback;
  if (/^true$/i.test(value)) return true;
  if (/^false$/i.test(value)) return false;
  throw badRequest(`Parameter "${name}" must be true or false, got "${value.slice(0, 100)}".`, null, 'Invalid parameter');
}

/** The longest timeout Node's timers hold (2^31 - 1 ms, about 24.8 days); a longer one would fire at once. */
export const MAX_TIMEOUT_MS = 2_147_483_647;

function intParam(query: Query, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const value = single(query, name);
  if (value === undefined || value === '') return undefined;
  if (!/^\d+$/.test(value.trim()) || Number(value) < min || Number(value) > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `an integer of at least ${min}` : `an integer from ${min} to ${max}`;
    throw badRequest(`Parameter "${name}" must be ${range}, got "${value.slice(0, 100)}".`, null, 'Invalid parameter');
  }
  return Number(value);
}

export function parseResultParams(query: Query, defaults: { array: boolean; timeoutMs: number }): ResultParams {
  const requestId = single(query, 'requestId') ?? single(query, 'requestid') ?? single(query, 'requestID');
  return {
    pagination: boolParam(query, 'pagination', false),
    limit: intParam(query, 'limit', 0),
    offset: intParam(query, 'offset', 0),
    requestId: requestId === '' ? undefined : requestId,
    array: boolParam(query, 'array', defaults.array),
    headers: boolParam(query, 'headers', false),
    timeoutMs: intParam(query, 'timeout', 1, MAX_TIMEOUT_MS) ?? defaults.timeoutMs,
    maxStaleness: intParam(query, 'maxStaleness', 0),
  };
}
