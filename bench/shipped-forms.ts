/**
 * The forms a shipped join can take at PostgreSQL, timed alone with `pg` (no vdb), alternating
 * run by run: the broad join of federated-joins.ts (orders 1M rows x the 24,997 enterprise
 * customers MariaDB sends), written as vdb writes it.
 *
 *   floor        PostgreSQL's scan of the orders alone (`count(*), sum(amount) WHERE created >= ...`)
 *   rows         the customers as arrays of rows, hash-joined, the orders read through `= ANY(keys)`
 *   lookup       the lookup form: distinct (country, segment) rows numbered, an int4 array indexed
 *                by customer_id holding each customer's number (exec/ship-lookup.ts)
 *   lookup+keys  the lookup form with the `= ANY(keys)` filter kept
 *   lookup, no small-side condition   the lookup form without `c.segment = 'enterprise'`: what
 *                PostgreSQL's estimate of that condition on the shipped rows (0.5 %) costs
 *                (a sort-based grouping instead of a hashed one); not a valid rewrite, a measurement
 *   eager        the orders grouped by their lookup number first (eager aggregation), then joined
 *                with the distinct rows and grouped again: PostgreSQL does not run that grouping
 *                in parallel (it takes the customer_id's distinct values as the groups' number)
 *
 *   npm run build && node dist/bench/shipped-forms.js     # BENCH_RUNS=9 for more runs (default 7)
 */
import mysql from 'mysql2/promise';
import pg from 'pg';
import { setUpData } from './federation-data.js';
import { median, table } from './measure.js';

const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 7) || 7);
const CREATED = `o.created >= DATE '2025-01-01'`;

/** An array literal of numbers or of quoted texts. */
const literal = (values: ReadonlyArray<number | string>, type: string) =>
  `'{${values.map((v) => (typeof v === 'number' ? String(v) : `"${v}"`)).join(',')}}'::${type}[]`;

async function main(): Promise<void> {
  const data = await setUpData();
  const my = await mysql.createConnection({ ...data.my });
  const [customers] = (await my.query({
    sql: "SELECT id, country, segment FROM bench_customers WHERE segment = 'enterprise'",
    rowsAsArray: true,
  })) as unknown as [Array<[number, string, string]>];
  await my.end();
  const client = new pg.Client({ ...data.pg });
  await client.connect();
  try {
    const ids = customers.map((c) => c[0]);
    const low = Math.min(...ids);
    const high = Math.max(...ids);
    const numbers = new Map<string, number>();
    const slots = new Int32Array(high - low + 1);
    for (const [id, country, segment] of customers) {
      const tuple = `${country}\u0000${segment}`;
      if (!numbers.has(tuple)) numbers.set(tuple, numbers.size + 1);
      slots[id - low] = numbers.get(tuple)!;
    }
    const tuples = [...numbers.keys()].map((t) => t.split('\u0000'));
    const rowsRelation = `(SELECT * FROM unnest(${literal(ids, 'int4')}, ${literal(
      customers.map((c) => c[1]),
      'text',
    )}, ${literal(
      customers.map((c) => c[2]),
      'text',
    )}) AS shipped(id, country, segment)) AS c`;
    const lookupArray = `(SELECT '[${low}:${high}]={${slots.join(',')}}'::int4[])`;
    const dictionary = `unnest(${literal(
      tuples.map((_, i) => i + 1),
      'int4',
    )}, ${literal(
      tuples.map((t) => t[0]!),
      'text',
    )}, ${literal(
      tuples.map((t) => t[1]!),
      'text',
    )}) AS d(code, country, segment)`;
    const lookupRelation = `LATERAL (SELECT o.customer_id AS id, d.country, d.segment FROM ${dictionary} WHERE d.code = ${lookupArray}[o.customer_id]) AS c`;
    const keyed = `(SELECT * FROM bench_orders WHERE customer_id = ANY(${literal(ids, 'int4')})) AS o`;
    const join = (orders: string, customersRelation: string, condition = "c.segment = 'enterprise' AND ") =>
      `SELECT c.country, count(*), sum(o.amount) FROM ${orders} JOIN ${customersRelation} ON c.id = o.customer_id WHERE ${condition}${CREATED} GROUP BY c.country`;
    const forms: Array<[string, string]> = [
      ['floor', `SELECT count(*), sum(amount) FROM bench_orders o WHERE ${CREATED}`],
      ['rows', join(keyed, rowsRelation)],
      ['lookup', join('bench_orders AS o', lookupRelation)],
      ['lookup+keys', join(keyed, lookupRelation)],
      ['lookup, no small-side condition', join('bench_orders AS o', lookupRelation, '')],
      [
        'eager',
        `SELECT d.country, sum(a.n)::int8 AS count, sum(a.s) AS sum FROM (SELECT ${lookupArray}[o.customer_id] AS code, count(*) AS n, sum(o.amount) AS s ` +
          `FROM bench_orders o WHERE ${CREATED} GROUP BY 1) AS a JOIN ${dictionary} ON d.code = a.code WHERE d.segment = 'enterprise' GROUP BY d.country`,
      ],
    ];
    const answers = new Map<string, string>();
    const times = forms.map(() => [] as number[]);
    for (let run = 0; run <= RUNS; run++) {
      for (const [i, [name, sql]] of forms.entries()) {
        const start = performance.now();
        const result = await client.query({ text: sql, rowMode: 'array' });
        if (run > 0) times[i]!.push(performance.now() - start);
        else answers.set(name, JSON.stringify((result.rows as unknown[][]).map((r) => r.map(String)).sort()));
      }
    }
    const expected = answers.get('rows');
    for (const name of ['lookup', 'lookup+keys', 'eager'])
      if (answers.get(name) !== expected) throw new Error(`${name} answers differently from rows`);
    const floor = median(times[0]!);
    console.log(`${customers.length} customers, keys ${low}..${high}; median of ${RUNS} runs, alternating`);
    console.log(
      table(
        ['form', 'ms', '÷ floor'],
        forms.map(([name], i) => [name, median(times[i]!).toFixed(1), (median(times[i]!) / floor).toFixed(2)]),
      ),
    );
    console.log('answers of rows, lookup, lookup+keys and eager identical');
  } finally {
    await client.end();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
