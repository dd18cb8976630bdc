/**
 * The load generator of bench/point-lookup.ts, in a process of its own so that it never shares a
 * JS thread with what it measures: autocannon against one URL for a while, then one JSON line
 * on stdout with requests/s, latency percentiles, errors and this process's CPU time.
 *
 * Usage: node dist/bench/load.js '<json of LoadSpec>'
 */
import autocannon from 'autocannon';

export interface LoadSpec {
  url: string;
  headers: Record<string, string>;
  /** Request bodies: `{ID}` in the template is replaced by a random key from 1 to maxId. */
  bodyTemplate: string;
  /** GET instead of POST (no body); default POST. */
  method?: 'GET' | 'POST';
  /** The URL's path and query, with `{ID}` replaced as in the body; default the URL's own. */
  pathTemplate?: string;
  maxId: number;
  connections: number;
  seconds: number;
}

export interface LoadResult {
  requestsPerSecond: number;
  /** Requests answered in all. */
  requests: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  loaderCpuShare: number;
}

const spec = JSON.parse(process.argv[2] ?? '{}') as LoadSpec;
const cpu = process.cpuUsage();
const started = process.hrtime.bigint();
const result = await autocannon({
  url: spec.url,
  method: spec.method ?? 'POST',
  headers: spec.method === 'GET' ? spec.headers : { 'content-type': 'application/json', ...spec.headers },
  connections: spec.connections,
  duration: spec.seconds,
  requests: [
    {
      setupRequest: (request) => {
        const id = String(1 + Math.floor(Math.random() * spec.maxId));
        return {
          ...request,
          ...(spec.pathTemplate ? { path: spec.pathTemplate.replace('{ID}', id) } : {}),
          ...(spec.method === 'GET' ? {} : { body: spec.bodyTemplate.replace('{ID}', id) }),
        };
      },
    },
  ],
});
const used = process.cpuUsage(cpu);
const wallMicros = Number(process.hrtime.bigint() - started) / 1000;
const out: LoadResult = {
  requestsPerSecond: result.requests.average,
  requests: result.requests.total,
  p50: result.latency.p50,
  p99: result.latency.p99,
  errors: result.errors + result.timeouts,
  non2xx: result.non2xx,
  loaderCpuShare: (used.user + used.system) / wallMicros,
};
process.stdout.write(`${JSON.stringify(out)}\n`);
