/**
 * EXPLAIN's rows (Step, Location, Operation, Object, Pushed, SQL; docs/sql.md#explain) as a tree:
 * the engine's statement at the root, the source queries and scans that feed it below.
 */
import type { Result } from './api.js';

export interface PlanNode {
  step: number;
  location: string;
  operation: string;
  object: string;
  pushed: string | null;
  sql: string;
  children: PlanNode[];
}

const text = (value: unknown) => (value === null || value === undefined ? '' : String(value));

export function planTree(result: Result): PlanNode[] {
  const at = (name: string) => result.columns.findIndex((c) => c.toLowerCase() === name.toLowerCase());
  const [step, location, operation, object, pushed, sql] = ['Step', 'Location', 'Operation', 'Object', 'Pushed', 'SQL'].map(at);
  const nodes: PlanNode[] = result.rows.map((row, i) => ({
    step: step! >= 0 ? Number(row[step!]) : i + 1,
    location: text(row[location!]),
    operation: text(row[operation!]),
    object: text(row[object!]),
    pushed: pushed! >= 0 && row[pushed!] !== null ? text(row[pushed!]) : null,
    sql: text(row[sql!]),
    children: [],
  }));
  // The statement the engine executes reads every other step's rows; a whole statement at a source stands alone.
  const root = nodes.find((n) => n.operation === 'execute');
  if (!root) return nodes;
  root.children = nodes.filter((n) => n !== root);
  return [root];
}
