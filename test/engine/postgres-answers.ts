/**
 * Answers of PostgreSQL and of vdb compared exactly: column names, types (PostgreSQL's type and
 * the engine type vdb shows for it) and the JSON text of every row, as written (no number is
 * reparsed, so 1.5 and 1.50 differ).
 */

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
