/**
 * The reference of bench/point-lookup.ts: what an application would write by hand without vdb,
 * a bare fastify server with a `pg` pool answering the same point lookup as JSON rows (and a
 * route answering a constant, the floor of any HTTP service on this machine).
 *
 * Usage: node dist/bench/baseline-server.js  (prints "listening on <url>")
 */
import Fastify from 'fastify';
import pg from 'pg';

const pool = new pg.Pool({
  host: process.env.PGHOST ?? '127.0.0.1',
  user: process.env.PGUSER ?? 'postgres',
  database: process.env.PGDATABASE ?? 'test',
  max: 10,
});
const app = Fastify({ logger: false });
app.post<{ Body: { id: number } }>('/lookup', async (request) => {
  const result = await pool.query({ text: 'SELECT * FROM bench_lookup WHERE id = $1', values: [request.body.id], rowMode: 'array' });
  return result.rows;
});
app.post('/constant', async () => [[1]]);
const url = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`listening on ${url}\n`);
process.once(
  'SIGTERM',
  () =>
    void app
      .close()
      .then(() => pool.end())
      .then(() => process.exit(0)),
);
