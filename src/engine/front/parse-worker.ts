/**
 * The parsing worker (parse-pool.ts): parses statements and measures their trees off the main
 * thread, and sends back the tree only when it is within the limits, so that a statement too
 * large costs the main thread nothing beyond its text.
 */
import os from 'node:os';
import { parentPort } from 'node:worker_threads';
import { loadModule, parseSync } from 'libpg-query';
import { sizeRefusal, treeSize, type StatementSizeLimits } from './statement-size.js';

export interface ParseRequest {
  id: number;
  sql: string;
  limits: StatementSizeLimits;
}

export type ParseReply =
  | { id: number; tree: unknown }
  | { id: number; size: { nodes: number; depth: number; widest: number } }
  | { id: number; error: { message: string; sqlDetails?: unknown; stackOverflow: boolean } };

// The lowest CPU priority, for this thread only (Linux: a thread's nice value is its own; elsewhere
// it would be the whole process's): parsing giant statements kept the main thread, which answers
// /rest/api/status and sign-ins, waiting for a core for up to 100 ms (bench/status-under-flood.ts).
// The worker still has every core the rest of the process leaves idle. Where a sandbox forbids
// it, the worker keeps the priority it has.
if (process.platform === 'linux') {
  try {
    os.setPriority(19);
  } catch {
    // the same priority as the rest of the process
  }
}

const ready = loadModule();
const port = parentPort!;

port.on('message', (request: ParseRequest) => {
  void ready.then(() => {
    let reply: ParseReply;
    try {
      const tree = parseSync(request.sql) as unknown;
      const size = treeSize(tree, request.limits.maxSyntaxNodes);
      // Beyond the limits only the size goes back: the main thread turns it into the 400.
      reply = sizeRefusal(size, request.limits) ? { id: request.id, size } : { id: request.id, tree };
    } catch (err) {
      reply = {
        id: request.id,
        error: {
          message: err instanceof Error ? err.message : String(err),
          sqlDetails: (err as { sqlDetails?: unknown }).sqlDetails,
          stackOverflow: err instanceof RangeError && /call stack/i.test(err.message),
        },
      };
    }
    port.postMessage(reply);
  });
});
