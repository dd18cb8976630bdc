/**
 * The web console: the Vite build of web/ served at `/` (docs/console.md). Only the files that
 * exist at start get routes (no wildcard), so every other path, /rest/api/... above all, still
 * reaches the API's own routes and its JSON 404. Without a build, `/` says how to make one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';

/** The build output of web/ (web/vite.config.ts writes it there). */
export const CONSOLE_BUILD = path.join('web', 'dist');

/** The package root: the first folder above this module with a package.json (src/ or dist/src/). */
function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) return process.cwd();
    dir = parent;
  }
  return dir;
}

// The console talks to this origin only; CodeMirror adds its styles at run time.
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

const MISSING_PAGE = (dir: string) =>
  '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>vdb console not built</title></head>' +
  '<body><h1>The web console is not built</h1>' +
  `<p>vdb found no console in <code>${dir.replace(/[<>&"]/g, '')}</code>. Build it with <code>npm run build</code> ` +
  '(or <code>npx vite build web</code>) and restart vdb.</p>' +
  '<p>The REST API works without it: see <code>/rest/api/openapi.json</code> and docs/rest.md.</p></body></html>\n';

export interface ConsoleOptions {
  /** Folder of the built console; by default web/dist of the package. */
  root?: string;
}

export async function consoleRoutes(app: FastifyInstance, options: ConsoleOptions = {}): Promise<void> {
  const root = options.root ?? path.join(packageRoot(), CONSOLE_BUILD);
  if (!fs.existsSync(path.join(root, 'index.html'))) {
    app.log.warn({ root }, 'web console not built: / explains how to build it');
    app.get('/', { schema: { hide: true } }, async (_request, reply) =>
      reply.code(503).type('text/html; charset=utf-8').headers(SECURITY_HEADERS).send(MISSING_PAGE(root)),
    );
    return;
  }
  await app.register(fastifyStatic, {
    root,
    // One route per built file, found now: no catch-all that could shadow an API path.
    wildcard: false,
    index: ['index.html'],
    cacheControl: false,
    // Hashed asset names may be cached for good; index.html must be fetched again after an upgrade.
    setHeaders: (res, filePath) => {
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
      const immutable = filePath.includes(`${path.sep}assets${path.sep}`);
      res.setHeader('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
    schemaHide: true,
  });
}
