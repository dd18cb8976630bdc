/** EXPLAIN as a tree: each step with where it runs, what is pushed, and the exact SQL it sends. */
import type { PlanNode } from '../lib/explain.js';

function Step({ node }: { node: PlanNode }) {
  return (
    <li>
      <details open>
        <summary>
          <span class="step">{node.step}</span> <strong>{node.location}</strong> · {node.operation} · <code>{node.object}</code>
          {node.pushed && <span class="pushed"> pushed: {node.pushed}</span>}
        </summary>
        <pre class="sql" aria-label={`SQL of step ${node.step}`}>
          {node.sql}
        </pre>
        {node.children.length > 0 && (
          <ul>
            {node.children.map((c) => (
              <Step key={c.step} node={c} />
            ))}
          </ul>
        )}
      </details>
    </li>
  );
}

export function PlanTree({ nodes }: { nodes: PlanNode[] }) {
  return (
    <section class="plan" aria-label="Query plan" data-testid="plan">
      <ul>
        {nodes.map((n) => (
          <Step key={n.step} node={n} />
        ))}
      </ul>
    </section>
  );
}
