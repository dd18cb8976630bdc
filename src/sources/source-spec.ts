/**
 * The one description of a new data source shared by the three doors onto the catalog: the REST
 * body of POST /rest/api/source, the SYSADMIN procedures and the config file. Properties come
 * as `key=value,key=value` strings (Data Virtuality's format); secrets are split off here.
 */
import { networkOf } from '../connectors/kinds.js';
import { badRequest } from '../errors.js';
import type { ConnectionChange, NewSource } from './registry.js';
import type { SourceKind } from '../catalog/types.js';

export interface SourceSpec {
  name?: unknown;
  template?: unknown;
  translator?: unknown;
  connectionProps?: unknown;
  modelProps?: unknown;
  translatorProps?: unknown;
  encryptedProperties?: unknown;
  description?: unknown;
}

const KINDS: Record<string, SourceKind> = {
  postgresql: 'postgresql',
  postgres: 'postgresql',
  mysql: 'mysql',
  mariadb: 'mysql',
  sqlite: 'sqlite',
  file: 'file',
  duckdb: 'duckdb',
};

/** Property names whose values are secrets: stored encrypted, never shown. */
const SECRET_KEYS = /(password|secret|token)$/i;

/**
 * Parses `key=value,key=value`. A backslash escapes the next character, so values may hold
 * commas and equals signs (`password=a\,b`). Also accepts a JSON object of strings.
 */
export function parseProps(input: unknown, what: string): Record<string, string> {
  if (input === undefined || input === null || input === '') return {};
  if (typeof input === 'object' && !Array.isArray(input)) {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(input)) out[k] = String(v);
    return out;
  }
  if (typeof input !== 'string')
    throw badRequest(`"${what}" must be a string of key=value pairs.`, 'Example: "host=localhost,port=5432"', 'Invalid properties');
  const props: Record<string, string> = {};
  let key = '';
  let value = '';
  let inValue = false;
  const flush = () => {
    const k = key.trim();
    if (k === '' && !inValue && value === '') return;
    if (k === '' || !inValue)
      throw badRequest(
        `"${what}" has an entry without key=value: "${key}".`,
        'Separate entries with commas; escape a comma inside a value as \\,',
        'Invalid properties',
      );
    props[k] = value.trim();
    key = '';
    value = '';
    inValue = false;
  };
  for (let i = 0; i < input.length; i++) {
    let ch = input[i]!;
    if (ch === '\\' && i + 1 < input.length) ch = input[++i]!;
    else if (ch === ',') {
      flush();
      continue;
    } else if (ch === '=' && !inValue) {
      inValue = true;
      continue;
    }
    if (inValue) value += ch;
    else key += ch;
  }
  flush();
  return props;
}

const MAX_TIMER_MS = 2_147_483_647;
const LABEL = '[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62})';
/** A host name, an IPv4 address, or an IPv6 address (bare or in brackets). */
const HOST_NAME = new RegExp(`^${LABEL}(?:\\.${LABEL})*\\.?$`);
const IPV6 = /^\[?[0-9A-Fa-f:.]+(%[\w.-]+)?\]?$/;

const invalidProperty = (what: string, key: string, value: string, expected: string) =>
  badRequest(`"${what}" has ${key}=${JSON.stringify(value.slice(0, 100))}, which is not ${expected}.`, null, 'Invalid properties');

function checkInteger(what: string, props: Record<string, string>, key: string, min: number, max: number, expected: string): void {
  const value = props[key];
  if (value === undefined) return;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) throw invalidProperty(what, key, value, expected);
}

/**
 * The connection properties of a networked source (PostgreSQL, MySQL/MariaDB) that its driver
 * would take wrongly or fail on late: a port outside 1-65535, a host that is no host name or
 * address, timeouts and pool sizes that are no positive integers. Refused when the source is added.
 */
export function checkNetworkProps(kind: SourceKind, connection: Record<string, string>, model: Record<string, string>): void {
  const network = networkOf(kind);
  if (!network) return;
  const host = connection.host;
  // PostgreSQL also takes the folder of its Unix socket as the host.
  const socketFolder = network.socketFolders && (host ?? '').startsWith('/') && !/[\s\p{Cc}]/u.test(host ?? '');
  if (host !== undefined && !socketFolder && (host.length > 253 || !(HOST_NAME.test(host) || (host.includes(':') && IPV6.test(host))))) {
    throw invalidProperty('connectionProps', 'host', host, 'a host name or IP address');
  }
  checkInteger('connectionProps', connection, 'port', 1, 65535, 'a port from 1 to 65535');
  checkInteger('modelProps', model, 'connectTimeoutMs', 1, MAX_TIMER_MS, `an integer from 1 to ${MAX_TIMER_MS} (milliseconds)`);
  checkInteger('modelProps', model, 'maxConnections', 1, 10_000, 'an integer from 1 to 10000');
  checkInteger('modelProps', model, 'poolWaitMs', 1, MAX_TIMER_MS, `an integer from 1 to ${MAX_TIMER_MS} (milliseconds)`);
}

/**
 * A change of a source's connection (SYSADMIN.alterDataSource): `connectionProps` (when given)
 * replaces the connection properties, less the secret ones, which join `encryptedProperties`.
 */
export function connectionChangeFromSpec(
  kind: SourceKind,
  model: Record<string, string>,
  connectionProps: unknown,
  encryptedProperties: unknown,
): ConnectionChange {
  const change: ConnectionChange = {};
  const secrets =
    encryptedProperties === undefined || encryptedProperties === null ? {} : parseProps(encryptedProperties, 'encryptedProperties');
  if (connectionProps !== undefined && connectionProps !== null) {
    const connection = parseProps(connectionProps, 'connectionProps');
    for (const [k, v] of Object.entries(connection)) {
      if (SECRET_KEYS.test(k)) {
        secrets[k] = v;
        delete connection[k];
      }
    }
    checkNetworkProps(kind, connection, model);
    change.connection = connection;
  }
  if (Object.keys(secrets).length > 0 || (encryptedProperties !== undefined && encryptedProperties !== null)) change.secrets = secrets;
  return change;
}

export function sourceFromSpec(spec: SourceSpec): NewSource {
  if (typeof spec.name !== 'string' || spec.name === '') throw badRequest('"name" is required.', null, 'Invalid data source');
  const kindName = String(spec.template ?? spec.translator ?? '').toLowerCase();
  const kind = KINDS[kindName];
  if (!kind) {
    throw badRequest(
      `Unknown template/translator "${kindName}".`,
      'Use one of: postgresql, mysql (MySQL and MariaDB), sqlite, file, duckdb.',
      'Invalid data source',
    );
  }
  const connection = parseProps(spec.connectionProps, 'connectionProps');
  const secrets: Record<string, string> = parseProps(spec.encryptedProperties, 'encryptedProperties');
  for (const [k, v] of Object.entries(connection)) {
    if (SECRET_KEYS.test(k)) {
      secrets[k] = v;
      delete connection[k];
    }
  }
  const model = parseProps(spec.modelProps, 'modelProps');
  checkNetworkProps(kind, connection, model);
  return {
    name: spec.name,
    kind,
    connection,
    secrets,
    model,
    translator: parseProps(spec.translatorProps, 'translatorProps'),
    description: typeof spec.description === 'string' ? spec.description : null,
    readOnly: /^(true|1|yes)$/i.test(model.readOnly ?? ''),
  };
}
