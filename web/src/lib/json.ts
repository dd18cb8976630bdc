/**
 * JSON with exact numbers. JSON.parse turns every number into a double, so a BIGINT
 * 9007199254740993 becomes …992, a DECIMAL 64.10 becomes 64.1. The API sends exact digits; this
 * parser keeps each number as its text (Num), and jsonText writes values back with those digits.
 */

/** A JSON number kept as the text the API sent. Number(n) gives the nearest double. */
export class Num {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
  valueOf(): number {
    return Number(this.text);
  }
}

/**
 * A list or object kept as the exact text the API sent (its spacing and digits), for values shown
 * and copied whole: a JSON column, a list, a struct. `value` parses it when it is needed.
 */
export class RawJson {
  constructor(readonly text: string) {}
  get value(): JsonValue {
    return parseJson(this.text);
  }
  toString(): string {
    return this.text;
  }
}

export type JsonValue = string | Num | RawJson | boolean | null | JsonValue[] | { [key: string]: JsonValue };

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
// Any character from space up but the quote and the backslash, or an escape (JSON has no raw control characters).
const STRING = /"(?:[ !#-[\]-\uffff]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const SPACE = /[ \t\n\r]*/y;

/**
 * Parses JSON text as JSON.parse does, except that numbers stay Num, and lists and objects
 * nested `rawDepth` deep or deeper stay RawJson (2 for a result's cells: result, row, cell).
 * Throws SyntaxError on bad input.
 */
export function parseJson(text: string, rawDepth = Infinity): JsonValue {
  let at = 0;
  const fail = (): never => {
    throw new SyntaxError(`Unexpected ${at < text.length ? JSON.stringify(text[at]) : 'end'} in JSON at position ${at}`);
  };
  const space = () => {
    SPACE.lastIndex = at;
    SPACE.test(text);
    at = SPACE.lastIndex;
  };
  const match = (re: RegExp): string | null => {
    re.lastIndex = at;
    const m = re.exec(text);
    if (!m) return null;
    at = re.lastIndex;
    return m[0];
  };
  const string = (): string => {
    const literal = match(STRING) ?? fail();
    return literal.includes('\\') ? (JSON.parse(literal) as string) : literal.slice(1, -1);
  };
  const value = (depth: number): JsonValue => {
    space();
    const ch = text[at];
    if (ch === '"') return string();
    if ((ch === '[' || ch === '{') && depth >= rawDepth) {
      const start = at;
      value(-Infinity);
      return new RawJson(text.slice(start, at));
    }
    if (ch === '[') {
      at++;
      const list: JsonValue[] = [];
      space();
      if (text[at] === ']') return (at++, list);
      for (;;) {
        list.push(value(depth + 1));
        space();
        if (text[at] === ',') at++;
        else if (text[at] === ']') return (at++, list);
        else fail();
      }
    }
    if (ch === '{') {
      at++;
      const object: { [key: string]: JsonValue } = {};
      space();
      if (text[at] === '}') return (at++, object);
      for (;;) {
        space();
        if (text[at] !== '"') fail();
        const key = string();
        space();
        if (text[at++] !== ':') fail();
        // defineProperty: a key "__proto__" is a plain key, as with JSON.parse.
        Object.defineProperty(object, key, { value: value(depth + 1), enumerable: true, writable: true, configurable: true });
        space();
        if (text[at] === ',') at++;
        else if (text[at] === '}') return (at++, object);
        else fail();
      }
    }
    if (text.startsWith('true', at)) return ((at += 4), true);
    if (text.startsWith('false', at)) return ((at += 5), false);
    if (text.startsWith('null', at)) return ((at += 4), null);
    const number = match(NUMBER);
    return number === null ? fail() : new Num(number);
  };
  const result = value(0);
  space();
  if (at !== text.length) fail();
  return result;
}

/** JSON text of a value, numbers with the digits they arrived with. */
export function jsonText(value: JsonValue | undefined): string {
  if (value === null || value === undefined) return 'null';
  if (value instanceof Num || value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if (typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** JSON text laid out with two-space indents, numbers with the digits they arrived with. */
export function jsonPretty(value: JsonValue | undefined, indent = ''): string {
  if (value instanceof RawJson) return jsonPretty(value.value, indent);
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    return value.length === 0 ? '[]' : `[\n${value.map((v) => inner + jsonPretty(v, inner)).join(',\n')}\n${indent}]`;
  }
  if (value !== null && typeof value === 'object' && !(value instanceof Num)) {
    const entries = Object.entries(value);
    return entries.length === 0
      ? '{}'
      : `{\n${entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${jsonPretty(v, inner)}`).join(',\n')}\n${indent}}`;
  }
  return jsonText(value);
}
