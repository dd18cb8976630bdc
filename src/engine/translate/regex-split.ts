/**
 * regexp_split_to_array(s, pattern [, flags]) with PostgreSQL's split points. PostgreSQL skips
 * the degenerate matches: an empty match at the start or the end of the text, or right after the
 * previous match (regexp.c, setup_regexp_matches). The engine's own split keeps the empty match
 * right after a previous match (an extra '' element). Its global replace (RE2's) skips exactly
 * that one: each match is wrapped in markers by the replace, the empty ones at the start and end
 * are dropped, and the text is split at the markers. The markers hold U+FFFF, a noncharacter
 * of Unicode (a text holding one is refused). As in PostgreSQL, '.' matches a newline.
 */
import type { Node } from '@pgsql/types';
import { call, engineCall, evaluatedOnce, int, isNullConst, literalText, notAsPostgres, op, stringConst } from '../tree/syntax-nodes.js';
import { sameMatchRegex } from './posix-regex.js';

/** The marker character: a noncharacter of Unicode, which no text is expected to hold (one that does is refused). */
const MARK = '\uffff';
/** The replacement that wraps each match in markers (`\0` is the match). */
export const SPLIT_MARKING = `${MARK}(\\0${MARK})`;
/** The markers around an empty match. */
const emptyMatch = (): Node => stringConst(`${MARK}(${MARK})`);

/** The options PostgreSQL's flags give, as RE2's inline flags; refused for other flags. */
function inlineFlags(flags: Node | undefined, name: string): string {
  if (flags === undefined) return '(?s)';
  const text = literalText(flags);
  if (text === null || !/^[ic]*$/.test(text)) {
    throw notAsPostgres(
      `${name} with the flags ${text === null ? 'given by an expression' : `'${text}'`}`,
      "Give the flags as a constant: 'i' (case-insensitive) or 'c' (case-sensitive).",
    );
  }
  // The last of i and c wins, as in PostgreSQL.
  return text.lastIndexOf('i') > text.lastIndexOf('c') ? '(?si)' : '(?s)';
}

/** The array of the parts; `name` is the function called, for the refusals. */
export function regexSplit(args: Node[], name = 'regexp_split_to_array'): Node | null {
  if (args.length !== 2 && args.length !== 3) return null;
  const [text, patternArg, flags] = args as [Node, Node, Node?];
  const options = inlineFlags(flags, name);
  const patternText = literalText(patternArg);
  if (patternText === null && !isNullConst(patternArg)) {
    throw notAsPostgres(`${name} with a pattern that is not a constant`, 'Give the pattern as a constant.');
  }
  // The pattern must find PostgreSQL's matches (posix-regex.ts); a NULL pattern stays NULL.
  const pattern = patternText === null ? patternArg : stringConst(sameMatchRegex(patternText, options.includes('i')));
  return evaluatedOnce(text, (value) => {
    const wrapped = engineCall('regexp_replace', [
      value,
      op('||', stringConst(options), pattern),
      stringConst(SPLIT_MARKING),
      stringConst('g'),
    ]);
    const split = evaluatedOnce(wrapped, (marked) => {
      const length = engineCall('length', [marked]);
      const start: Node = {
        CaseExpr: {
          args: [{ CaseWhen: { expr: engineCall('starts_with', [marked, emptyMatch()]), result: int(5) } }],
          defresult: int(1),
        },
      };
      const end: Node = {
        CaseExpr: {
          args: [{ CaseWhen: { expr: engineCall('ends_with', [marked, emptyMatch()]), result: op('-', length, int(4)) } }],
          defresult: length,
        },
      };
      // Both may name the one empty match of an empty text: at least nothing is kept then.
      const kept = engineCall('substr', [marked, start, call('greatest', [op('+', op('-', end, start), int(1)), int(0)])]);
      return engineCall('regexp_split_to_array', [kept, stringConst('(?s)\\x{ffff}\\([^\\x{ffff}]*\\x{ffff}\\)')]);
    });
    const failure = call('error', [stringConst(`${name} of a text holding the character U+FFFF is not supported by vdb's engine`)]);
    return {
      CaseExpr: { args: [{ CaseWhen: { expr: engineCall('contains', [value, stringConst(MARK)]), result: failure } }], defresult: split },
    };
  });
}
