import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import type { Node } from '@pgsql/types';
import { deparseSync } from 'pgsql-deparser';
import { asKind, mapTree, mapTreeUp, nodeKind } from '../../src/engine/tree/ast.js';
import { initParser, parseStatement } from '../../src/engine/front/parse.js';

before(() => initParser());

/** The deparsed text on one line (the deparser breaks long statements into lines). */
const sql = (tree: ReturnType<typeof parseStatement>) => deparseSync(tree).replace(/;\s*$/, '').replace(/\s+/g, ' ');

test('mapTree copies the tree with each node mapped, and leaves the tree as it was', () => {
  const tree = parseStatement('SELECT a + 1, f(2) FROM t WHERE b = 3');
  const original = JSON.stringify(tree);
  const plusTen = (node: Node): Node | undefined => {
    const ival = asKind(node, 'A_Const')?.ival;
    return ival ? { A_Const: { ival: { ival: (ival.ival ?? 0) + 10 } } } : undefined;
  };
  const mapped = mapTree(tree, plusTen);
  assert.equal(sql(mapped), 'SELECT a + 11, f(12) FROM t WHERE b = 13');
  assert.equal(JSON.stringify(tree), original);
  assert.notEqual(mapped.stmts, tree.stmts);
});

test('mapTree does not walk into what map answers', () => {
  const tree = parseStatement('SELECT g(h(1))');
  const seen: string[] = [];
  const mapped = mapTree(tree, (node) => {
    seen.push(nodeKind(node));
    const call = asKind(node, 'FuncCall');
    // The answer holds a call of its own, which mapTree must leave as it is.
    return call ? { FuncCall: { ...call, funcname: [{ String: { sval: 'k' } }] } } : undefined;
  });
  assert.equal(sql(mapped), 'SELECT k(h(1))');
  assert.equal(seen.filter((kind) => kind === 'FuncCall').length, 1);
});

test('mapTreeUp maps children before parents and keeps unchanged parts as the same objects', () => {
  const tree = parseStatement('SELECT coalesce(x, 1), y FROM t');
  const order: string[] = [];
  const mapped = mapTreeUp(tree, (node) => {
    order.push(nodeKind(node));
    const constant = asKind(node, 'A_Const');
    return constant?.ival ? { A_Const: { ival: { ival: 5 } } } : node;
  });
  assert.equal(sql(mapped), 'SELECT COALESCE(x, 5), y FROM t');
  assert.ok(order.indexOf('A_Const') < order.indexOf('CoalesceExpr'));
  const targets = (tree: typeof mapped) => asKind(tree.stmts![0]!.stmt, 'SelectStmt')!.targetList!;
  assert.notEqual(targets(mapped)[0], targets(tree)[0]);
  assert.equal(targets(mapped)[1], targets(tree)[1]);
  assert.equal(asKind(tree.stmts![0]!.stmt, 'SelectStmt')!.fromClause, asKind(mapped.stmts![0]!.stmt, 'SelectStmt')!.fromClause);
  assert.equal(
    mapTreeUp(tree, (node) => node),
    tree,
  );
});
