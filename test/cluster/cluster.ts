/**
 * Harness of the cluster test: vdb instances as child processes (`node dist/src/cli.js serve`)
 * sharing one catalog database in PostgreSQL and one Redis, and Debian's nginx in front of them
 * with deploy/nginx.conf, the configuration docs/deploy.md shows (its ports replaced).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => fs.existsSync(p)) ?? null;

/** Skip reason when nginx is missing; in CI the test must run (.ci/run installs it). */
export const noNginx: string | false = !NGINX && !process.env.CI ? 'no nginx (apt-get install nginx)' : false;

/** A free TCP port on loopback (taken and released at once). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export interface Instance {
  name: string;
  port: number;
  url: string;
  process: ChildProcess;
  /** Output of the process so far (logs), for failure messages. */
  output(): string;
  /** SIGTERM (graceful) or SIGKILL; resolves when the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `vdb serve` with a configuration file of its own; resolves once /readyz answers 200. */
export async function startInstance(name: string, dir: string, config: Record<string, unknown>, adminPassword: string): Promise<Instance> {
  const port = await freePort();
  const dataDir = path.join(dir, name);
  fs.mkdirSync(dataDir, { recursive: true });
  const configFile = path.join(dir, `${name}.json`);
  fs.writeFileSync(configFile, JSON.stringify({ ...config, port, demo: false, logLevel: 'warn' }));
  const child = spawn(process.execPath, ['dist/src/cli.js', 'serve', '--data-dir', dataDir], {
    env: { ...process.env, VDB_CONFIG: configFile, VDB_ADMIN_PASSWORD: adminPassword, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const instance: Instance = {
    name,
    port,
    url,
    process: child,
    output: () => output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`${name} exited: ${output}`);
        return (await fetch(`${url}/readyz`)).status === 200;
      },
      30_000,
      `${name} to be ready`,
    );
  } catch (err) {
    await instance.stop('SIGKILL');
    throw new Error(`${String(err)}\n${output}`);
  }
  return instance;
}

export interface Proxy {
  url: string;
  stop(): Promise<void>;
}

/** nginx in front of `upstreams`, with deploy/nginx.conf's settings; its files under `dir`. */
export async function startNginx(dir: string, upstreams: readonly number[]): Promise<Proxy> {
  if (!NGINX) throw new Error('nginx is not installed');
  const port = await freePort();
  const prefix = path.join(dir, 'nginx');
  fs.mkdirSync(prefix, { recursive: true });
  const shipped = fs.readFileSync(path.resolve('deploy', 'nginx.conf'), 'utf8');
  const servers = upstreams.map((p) => `server 127.0.0.1:${p} max_fails=1 fail_timeout=5s;`).join('\n    ');
  let conf = shipped
    .replace(/^\s*server 127\.0\.0\.1:8081[^\n]*\n\s*server 127\.0\.0\.1:8082[^\n]*/m, `    ${servers}`)
    .replace('listen 127.0.0.1:8080;', `listen 127.0.0.1:${port};`)
    .replace('worker_processes auto;', 'worker_processes 1;');
  if (conf === shipped || !conf.includes(servers)) throw new Error('deploy/nginx.conf no longer has the lines this harness replaces');
  // As root (CI), the workers stay root instead of a user that cannot write this test's folders.
  if (process.getuid?.() === 0) conf = `user root;\n${conf}`;
  const file = path.join(prefix, 'nginx.conf');
  fs.writeFileSync(file, conf);
  const child = spawn(NGINX, ['-p', prefix, '-c', file, '-e', path.join(prefix, 'error.log'), '-g', 'daemon off;'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let errors = '';
  child.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`nginx exited: ${errors}`);
      return (await fetch(`${url}/healthz`)).status === 200;
    },
    10_000,
    'nginx',
  );
  return {
    url,
    async stop() {
      if (child.exitCode === null) child.kill('SIGQUIT');
      await exited;
    },
  };
}

export const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'vdb-cluster-'));
