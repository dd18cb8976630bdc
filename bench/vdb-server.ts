/**
 * A vdb server for the benchmarks: `node dist/src/cli.js serve` as a child process on an
 * ephemeral port over a fresh data directory, and the HTTP client they measure with.
 */
import type { BenchData } from './federation-data.js';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

export const PASSWORD = 'bench-admin-password-1';

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** Repository root, from both bench/ (tsx) and dist/bench/ (compiled). */
export const ROOT = [path.resolve(HERE, '..'), path.resolve(HERE, '..', '..')].find((dir) =>
  fs.existsSync(path.join(dir, 'package.json')),
)!;
export const CLI = path.join(ROOT, 'dist', 'src', 'cli.js');

export const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** Credentials sent with each request: HTTP Basic, or the x-auth-token from POST /api/login. */
export type Auth = Record<string, string>;
export const BASIC: Auth = { authorization: `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}` };

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer[];
  bytes: number;
  ttfbMs: number;
}

/** One request; the body is kept as received chunks (no concatenation inside the timing). */
export function request(url: string, method: 'GET' | 'POST', auth: Auth, body?: unknown): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { ...auth };
    if (payload !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(payload));
    }
    const req = http.request(url, { method, headers, agent }, (res) => {
      const ttfbMs = performance.now() - start;
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        bytes += chunk.length;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: chunks, bytes, ttfbMs }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

export const text = (answer: HttpAnswer) => Buffer.concat(answer.body).toString('utf8');

export function expectStatus(answer: HttpAnswer, status: number, what: string): void {
  if (answer.status !== status) throw new Error(`${what}: HTTP ${answer.status}: ${text(answer).slice(0, 500)}`);
}

export interface VdbServer {
  url: string;
  dataDir: string;
  /** The server's process id (for its CPU time, lookup-setup.ts). */
  pid: number;
  stop(): Promise<void>;
}

/** Starts `node dist/src/cli.js serve` on an ephemeral port over a fresh data directory. */
export async function startVdb(
  /** `cli`: another build's dist/src/cli.js (a side-by-side with the build before). */
  options: { demo: boolean; env?: Record<string, string>; cli?: string } = { demo: true },
): Promise<VdbServer> {
  const cli = options.cli ?? CLI;
  if (!fs.existsSync(cli)) throw new Error(`${cli} is missing: run "npm run build" first (npm run bench does).`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-bench-'));
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('VDB_')) env[key] = value;
  Object.assign(env, {
    PORT: '0',
    VDB_HOST: '127.0.0.1',
    VDB_DATA_DIR: dataDir,
    ...(options.demo ? {} : { VDB_DEMO: 'false' }),
    VDB_ADMIN_PASSWORD: PASSWORD,
    VDB_LOG_LEVEL: 'warn',
    ...options.env,
  });
  // BENCH_NODE_OPTIONS: flags for the server's node, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it.
  const nodeFlags = (process.env.BENCH_NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean);
  const child: ChildProcess = spawn(process.execPath, [...nodeFlags, cli, 'serve'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const alive = () => child.exitCode === null && child.signalCode === null;
  const cleanup = () => fs.rmSync(dataDir, { recursive: true, force: true });
  // Never leave the server or its data directory behind, even on Ctrl-C or a crash.
  const onExit = () => {
    if (alive()) child.kill('SIGKILL');
    cleanup();
  };
  const onSignal = (signal: NodeJS.Signals) => {
    void stop().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('exit', onExit);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const stop = async () => {
    process.off('exit', onExit);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (alive()) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    cleanup();
  };

  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`vdb did not start within 30 s:\n${output}`)), 30_000);
      const onData = (chunk: Buffer) => {
        output = (output + chunk.toString('utf8')).slice(-20_000);
        const match = /vdb listening on (http:\/\/\S+)/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`vdb exited with code ${code} before listening:\n${output}`));
      });
    });
    // Keep draining the pipes so the child never blocks on a full one.
    child.stdout!.resume();
    child.stderr!.resume();
    const deadline = Date.now() + 15_000;
    for (;;) {
      try {
        const answer = await request(`${url}/rest/api/status`, 'GET', BASIC);
        if (answer.status === 200) break;
        throw new Error(`status answered HTTP ${answer.status}`);
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`vdb never answered /rest/api/status: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    return { url, dataDir, pid: child.pid!, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Logs in once (POST /api/login) and returns the token header: no scrypt per request. */
export async function login(server: VdbServer, username = 'admin', password = PASSWORD): Promise<Auth> {
  const answer = await request(`${server.url}/api/login`, 'POST', {}, { username, password });
  expectStatus(answer, 200, 'login');
  const { token } = JSON.parse(text(answer)) as { token: string };
  return { 'x-auth-token': token };
}

/** Adds the sources `pg` (PostgreSQL) and `my` (MariaDB) of the benchmarks' data (federation-data.ts). */
export async function addSqlSources(server: VdbServer, auth: Auth, data: Pick<BenchData, 'pg' | 'my'>): Promise<void> {
  const props = (entries: Record<string, string | number | undefined>) =>
    Object.entries(entries)
      .filter(([, v]) => v !== undefined && v !== '')
      .map(([k, v]) => `${k}=${String(v).replace(/[\\,=]/g, (c) => `\\${c}`)}`)
      .join(',');
  const sources = [
    {
      name: 'pg',
      template: 'postgresql',
      connectionProps: props({
        host: data.pg.host,
        port: data.pg.port,
        db: data.pg.database,
        'user-name': data.pg.user,
        password: data.pg.password,
      }),
    },
    {
      name: 'my',
      template: 'mysql',
      connectionProps: props({
        host: data.my.host,
        port: data.my.port,
        db: data.my.database,
        'user-name': data.my.user,
        password: data.my.password,
      }),
    },
  ];
  for (const source of sources) {
    const answer = await request(`${server.url}/rest/api/source`, 'POST', auth, { ...source, modelProps: '' });
    expectStatus(answer, 201, `adding source ${source.name}`);
  }
}
