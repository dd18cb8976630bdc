/**
 * EXPLAIN as a tree: each step with where it runs, what is pushed, and the exact SQL it sends.
 * With an analysis (EXPLAIN ANALYZE): what the run took and what the sources received.
 */
import type { Analysis } from '../lib/analyze.js';
import type { PlanNode } from '../lib/explain.js';
import { count, duration } from '../lib/format.js';

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

function Actual({ analysis }: { analysis: Analysis }) {
  const { durationMs, rows, sourceQueries } = analysis;
  return (
    <div class="analysis" data-testid="analysis">
      <p role="status">
        <strong>Ran</strong>:{' '}
        {durationMs === null
          ? `${duration(analysis.elapsedMs)} until the cursor was ready (the query log has no entry for it)`
          : `${duration(durationMs)} in vdb, ${rows === null ? 'no' : count(rows)} ${rows === 1 ? 'row' : 'rows'} (${duration(analysis.elapsedMs)} with the request)`}
      </p>
      <p class="muted small">The plan below is the one it ran with. What the sources received:</p>
      {sourceQueries === null ? (
        <p class="muted small">Not shown: the query log withholds it (no source read, or data narrowed for you).</p>
      ) : (
        <ol class="sent" aria-label="Statements sent to the sources">
          {sourceQueries.map((line, i) => {
            const colon = line.indexOf(': ');
            return (
              <li key={i}>
                <strong>{line.slice(0, colon)}</strong>
                <pre class="sql">{line.slice(colon + 2)}</pre>
              </li>
            );
          })}
        </ol>
      )}
    </div>
  );
}

export function PlanTree({ nodes, analysis }: { nodes: PlanNode[]; analysis?: Analysis | undefined }) {
  return (
    <section class="plan" aria-label="Query plan" data-testid="plan">
      {analysis && <Actual analysis={analysis} />}
      <ul>
        {nodes.map((n) => (
          <Step key={n.step} node={n} />
        ))}
      </ul>
    </section>
  );
}
