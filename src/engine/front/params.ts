/**
 * Statement parameters: `{"sql": "... WHERE id = $1", "params": [42]}`. Each `$n` of the parsed
 * statement is replaced by its value as a constant of the tree, before anything else looks at
 * it: text as an untyped literal (its type comes from where it stands, as a parameter's does in
 * PostgreSQL), numbers, booleans and null as such. No SQL text is ever built from a value.
 */
import type { Node, ParseResult } from '@pgsql/types';
import { badRequest } from '../../errors.js';
import { replaceNodesBelow, walk } from '../tree/ast.js';

export type ParamValue = string | number | boolean | null;

/** Largest integer written as an integer constant (PostgreSQL's int4); larger ones as numerals. */
const INT4_MAX = 2_147_483_647;

export function paramConstant(value: ParamValue): Node {
  if (value === null) return { A_Const: { isnull: true } };
  if (typeof value === 'boolean') return { A_Const: { boolval: { boolval: value } } };
  if (typeof value === 'number') {
    if (Number.isInteger(value) && Math.abs(value) <= INT4_MAX) return { A_Const: { ival: { ival: value } } };
    return { A_Const: { fval: { fval: String(value) } } };
  }
  return { A_Const: { sval: { sval: value } } };
}

/** Replaces every `$n` of `tree` by `values[n - 1]`; a 400 when the counts disagree (a `$n` and no values sent too). */
export function bindParameters(tree: ParseResult, values: readonly ParamValue[]): void {
  const used = new Set<number>();
  walk(tree, (nodeType, node) => {
    if (nodeType === 'ParamRef') used.add(node.number ?? 0);
  });
  if (used.size === 0 && values.length === 0) return;
  const missing = [...used].filter((n) => n < 1 || n > values.length).sort((a, b) => a - b);
  if (missing.length > 0) {
    throw badRequest(
      `The statement uses ${missing.map((n) => `$${n}`).join(', ')}, and "params" has ${values.length} value${values.length === 1 ? '' : 's'}.`,
      'Give one value in "params" for each of $1, $2, ... in the statement.',
      'Invalid query',
    );
  }
  const highest = Math.max(0, ...used);
  if (values.length > highest) {
    throw badRequest(
      `"params" has ${values.length} values, and the statement uses ${highest === 0 ? 'no parameter' : `$1 to $${highest}`}.`,
      'Send as many values as the statement has parameters.',
      'Invalid query',
    );
  }
  replaceNodesBelow(tree, (node) => ('ParamRef' in node ? paramConstant(values[(node.ParamRef.number ?? 1) - 1] ?? null) : undefined));
}
