/**
 * Answers of PostgreSQL and of vdb compared exactly: column names, types (PostgreSQL's type and
 * the engine type vdb shows for it) and the JSON text of every row, as written (no number is
 * reparsed, so 1.5 and 1.50 differ).
 */
import type pg from 'pg';
import type { TestServer } from '../helpers/server.js';

export interface Answer {
  names: string[];
  /** PostgreSQL's type names (pg_type.typname) or vdb's SQL-Column-Types. */
  types: string[];
  /** Each row's JSON array text. */
  rows: string[];
}

/** The engine type vdb shows for each PostgreSQL type. */
const ENGINE_TYPES: Record<string, RegExp> = {
  int2: /^SMALLINT$/,
  int4: /^INTEGER$/,
  int8: /^BIGINT$/,
  float4: /^FLOAT$/,
  float8: /^DOUBLE$/,
  numeric: /^(DECIMAL\(\d+,\d+\)|NUMERIC)$/,
  bool: /^BOOLEAN$/,
  text: /^VARCHAR$/,
  varchar: /^VARCHAR$/,
  bpchar: /^VARCHAR$/,
  name: /^VARCHAR$/,
  money: /^VARCHAR$/,
  date: /^DATE$/,
  timestamp: /^TIMESTAMP$/,
  timestamptz: /^TIMESTAMP WITH TIME ZONE$/,
  time: /^TIME$/,
  timetz: /^TIME WITH TIME ZONE$/,
  interval: /^INTERVAL$/,
  uuid: /^UUID$/,
  bytea: /^BLOB$/,
  // The SQL-Column-Types header names the engine's JSON columns VARCHAR (result-delivery.ts);
  // their JSON text is still compared.
  json: /^(JSON|VARCHAR)$/,
  jsonb: /^(JSON|VARCHAR)$/,
  record: /^STRUCT\(/,
  // pg_typeof's regtype: its name as text.
  regtype: /^VARCHAR$/,
};

export function sameType(postgresType: string, engineType: string): boolean {
  if (postgresType.startsWith('_')) {
    // PostgreSQL's array types hold any number of dimensions; the engine nests lists.
    const element = /^(.*?)(\[\])+$/.exec(engineType);
    return element !== null && sameType(postgresType.slice(1), element[1]!);
  }
  return ENGINE_TYPES[postgresType]?.test(engineType) ?? false;
}

/** The top-level elements of a JSON array text, each as written. */
export function splitJsonArray(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let inString = false;
  let start = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '[' || c === '{') depth++;
    else if (c === ']' || c === '}') {
      depth--;
      if (depth === 0 && i > start) parts.push(text.slice(start, i).trim());
    } else if (c === ',' && depth === 1) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  return parts.filter((p) => p !== '');
}

/** Null when both answers are the same, else what differs. */
export function compareAnswers(expected: Answer, actual: Answer, unordered: boolean): string | null {
  if (JSON.stringify(expected.names) !== JSON.stringify(actual.names))
    return `column names ${JSON.stringify(actual.names)}, PostgreSQL ${JSON.stringify(expected.names)}`;
  const types = expected.types.map((t, i) => (sameType(t, actual.types[i] ?? '') ? null : `${actual.types[i]} for ${t}`));
  if (types.some((t) => t !== null)) return `types: ${types.filter((t) => t !== null).join(', ')}`;
  const order = (rows: string[]) => (unordered ? [...rows].sort() : rows);
  const a = order(actual.rows);
  const e = order(expected.rows);
  if (a.length !== e.length) return `${a.length} rows, PostgreSQL ${e.length}: ${a.slice(0, 3).join(' ')} / ${e.slice(0, 3).join(' ')}`;
  const i = a.findIndex((row, k) => row !== e[k]);
  return i < 0 ? null : `row ${i + 1}: ${a[i]}, PostgreSQL ${e[i]}`;
}

/** PostgreSQL's type names by oid. */
export async function postgresTypeNames(postgres: pg.Client): Promise<Map<number, string>> {
  const types = await postgres.query<{ oid: number; name: string }>('SELECT oid::int AS oid, typname AS name FROM pg_type');
  return new Map(types.rows.map((r) => [r.oid, r.name]));
}

/** PostgreSQL's answer: names, type names, and each row as the JSON text vdb's contract gives it. */
export async function postgresAnswer(postgres: pg.Client, pgTypes: Map<number, string>, sql: string): Promise<Answer> {
  const plain = await postgres.query({ text: sql, rowMode: 'array' });
  const names = plain.fields.map((f) => f.name);
  const types = plain.fields.map((f) => pgTypes.get(f.dataTypeID) ?? String(f.dataTypeID));
  if (names.length === 0) return { names, types, rows: plain.rows.map(() => '[]') };
  const aliases = names.map((_, i) => `c${i}`);
  // vdb writes bytea as base64 (docs/rest.md), PostgreSQL's to_json as \x and hex digits.
  const values = aliases.map((a, i) =>
    types[i] === 'bytea' ? `to_json(encode(oracle.${a}, 'base64'))::text` : `to_json(oracle.${a})::text`,
  );
  const json = await postgres.query({
    text: `SELECT ${values.join(', ')} FROM (${sql}) AS oracle(${aliases.join(', ')})`,
    rowMode: 'array',
  });
  return { names, types, rows: json.rows.map((row: Array<string | null>) => `[${row.map((v) => v ?? 'null').join(',')}]`) };
}

/** vdb's answer to `sql` (the status and body when it is not 200). */
export async function vdbAnswer(server: TestServer, sql: string): Promise<{ status: number; answer?: Answer; body: string }> {
  const response = await server.request('/rest/api/query?headers=true', { body: { sql } });
  const body = await response.text();
  if (response.status !== 200) return { status: response.status, body };
  const [header = '[]', ...rows] = splitJsonArray(body);
  const types = JSON.parse(response.headers.get('sql-column-types') ?? '[]') as string[];
  return { status: 200, body, answer: { names: JSON.parse(header) as string[], types, rows } };
}
