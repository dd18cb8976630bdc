/**
 * PostgreSQL's `json -> key`, `json -> index`, `->>`: the part of the json value's text as it is
 * written (PostgreSQL's json keeps its input's text: spaces, `1.50`, `1e2`, `\u00e9`), where the
 * engine's JSON functions write the part anew (`{"b":1}`, `1.5`, `100.0`, `é`). The text is
 * scanned, not parsed into values: the part is the slice between its first and last character.
 *  - An object's key: its last member of that name (PostgreSQL's json keeps duplicate keys and
 *    answers the last); an array's index: from the end where negative; otherwise NULL.
 *  - `->>` gives a string's characters (its escapes read), SQL NULL for a JSON null, and the
 *    text of any other part.
 */
import {
  BIGINT,
  BOOLEAN,
  DuckDBScalarFunction,
  VARCHAR,
  type DuckDBBigIntVector,
  type DuckDBBooleanVector,
  type DuckDBConnection,
  type DuckDBVarCharVector,
} from '@duckdb/node-api';

const BLANK = new Set([' ', '\t', '\n', '\r']);

const skipBlanks = (text: string, i: number): number => {
  while (i < text.length && BLANK.has(text[i]!)) i++;
  return i;
};

/** The end (exclusive) of the string starting at `i` (a `"`). */
function stringEnd(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '"') return j + 1;
  }
  return text.length;
}

/** The end (exclusive) of the value starting at `i`. */
function valueEnd(text: string, i: number): number {
  const first = text[i];
  if (first === '"') return stringEnd(text, i);
  if (first === '{' || first === '[') {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const c = text[j];
      if (c === '"') j = stringEnd(text, j) - 1;
      else if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return text.length;
  }
  let j = i;
  while (j < text.length && !BLANK.has(text[j]!) && text[j] !== ',' && text[j] !== '}' && text[j] !== ']') j++;
  return j;
}

/** The members (key text and value slice) of the object or the elements of the array at `i`. */
function children(text: string, i: number): Array<{ key?: string; start: number; end: number }> {
  const object = text[i] === '{';
  const found: Array<{ key?: string; start: number; end: number }> = [];
  let j = skipBlanks(text, i + 1);
  if (text[j] === (object ? '}' : ']')) return found;
  while (j < text.length) {
    let key: string | undefined;
    if (object) {
      const keyEnd = stringEnd(text, j);
      key = JSON.parse(text.slice(j, keyEnd)) as string;
      j = skipBlanks(text, skipBlanks(text, keyEnd) + 1); // past the ':'
    }
    const end = valueEnd(text, j);
    found.push({ key, start: j, end });
    j = skipBlanks(text, end);
    if (text[j] !== ',') break;
    j = skipBlanks(text, j + 1);
  }
  return found;
}

/** The part of json text `doc` at `step` (a key or an index), as `->` (or `->>` with asText) gives it. */
export function jsonPart(doc: string, step: string | number, asText: boolean): string | null {
  const at = skipBlanks(doc, 0);
  const container = doc[at];
  if ((typeof step === 'string' && container !== '{') || (typeof step === 'number' && container !== '[')) return null;
  const parts = children(doc, at);
  const part = typeof step === 'string' ? parts.filter((p) => p.key === step).pop() : parts[step < 0 ? parts.length + step : step];
  if (!part) return null;
  const text = doc.slice(part.start, part.end);
  if (!asText) return text;
  if (text.startsWith('"')) return JSON.parse(text) as string;
  return text === 'null' ? null : text;
}

/** `vdb_json_part(doc, key or index, as_text)`: jsonPart as an engine function, an overload per kind of step. */
export function registerJsonParts(connection: DuckDBConnection): void {
  for (const stepType of [VARCHAR, BIGINT]) {
    connection.registerScalarFunction(
      DuckDBScalarFunction.create({
        name: 'vdb_json_part',
        returnType: VARCHAR,
        parameterTypes: [VARCHAR, stepType, BOOLEAN],
        mainFunction: (info, batch, output) => {
          const docs = batch.getColumnVector(0) as DuckDBVarCharVector;
          const steps = batch.getColumnVector(1) as DuckDBVarCharVector | DuckDBBigIntVector;
          const asText = batch.getColumnVector(2) as DuckDBBooleanVector;
          const out = output as DuckDBVarCharVector;
          try {
            for (let i = 0; i < batch.rowCount; i++) {
              const [doc, step, text] = [docs.getItem(i), steps.getItem(i), asText.getItem(i)];
              const key = typeof step === 'bigint' ? Number(step) : step;
              out.setItem(i, doc === null || key === null || text === null ? null : jsonPart(doc, key, text));
            }
          } catch (err) {
            info.setError(err instanceof Error ? err.message : String(err));
            return;
          }
          out.flush();
        },
      }),
    );
  }
}
