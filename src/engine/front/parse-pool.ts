/**
 * Parsing long statements in a worker thread. libpg-query's parser costs the thread that runs it
 * about 0.5 µs per node of the tree, and measuring the tree more: for a statement of a megabyte
 * that is hundreds of ms during which the process would answer nothing (not even
 * /rest/api/status or a sign-in). A statement longer than `INLINE_BYTES` is parsed and measured
 * by the worker, which sends back its tree only when it is within the limits; short ones are
 * parsed here, where a round trip to the worker would cost more than the parse.
 */
import { Worker } from 'node:worker_threads';
import type { ParseResult } from '@pgsql/types';
import { ApiError } from '../../errors.js';
import { parseStatement, requireOneStatement, syntaxError } from './parse.js';
import type { ParseReply } from './parse-worker.js';
import { checkStatementBytes, sizeRefusal, type StatementSizeLimits } from './statement-size.js';

/** Statements of at most this many characters are parsed on the calling thread (well under 10 ms). */
export const INLINE_BYTES = 8192;

interface Pending {
  sql: string;
  limits: StatementSizeLimits;
  resolve(tree: ParseResult): void;
  reject(err: unknown): void;
}

let worker: Worker | null = null;
const pending = new Map<number, Pending>();
let nextId = 1;

function failAll(err: unknown): void {
  for (const waiting of pending.values()) waiting.reject(err);
  pending.clear();
}

function theWorker(): Worker {
  if (worker) return worker;
  const started = new Worker(new URL('./parse-worker.js', import.meta.url));
  started.on('message', (reply: ParseReply) => {
    const waiting = pending.get(reply.id);
    if (!waiting) return;
    pending.delete(reply.id);
    if ('tree' in reply) {
      try {
        waiting.resolve(requireOneStatement(reply.tree as ParseResult));
      } catch (err) {
        waiting.reject(err);
      }
    } else if ('size' in reply) {
      waiting.reject(sizeRefusal(reply.size, waiting.limits));
    } else {
      waiting.reject(syntaxError(reply.error, waiting.sql));
    }
  });
  const lost = (err: unknown) => {
    if (worker === started) worker = null;
    failAll(
      new ApiError(
        503,
        'Service unavailable',
        `The parser stopped: ${err instanceof Error ? err.message : String(err)}`,
        'Send the statement again.',
        { 'Retry-After': '1' },
      ),
    );
  };
  started.on('error', lost);
  started.on('exit', (code) => lost(new Error(`exit code ${code}`)));
  // The worker never keeps the process alive; it waits for messages only. (After the listeners:
  // adding a message listener refs the port again.)
  started.unref();
  worker = started;
  return started;
}

/** Parses one statement, in the worker when it is long; 400 beyond `limits`, as `parseStatement`. */
export async function parseInWorker(sql: string, limits: StatementSizeLimits): Promise<ParseResult> {
  if (sql.length <= INLINE_BYTES) return parseStatement(sql, limits);
  checkStatementBytes(sql, limits);
  const id = nextId++;
  const target = theWorker();
  return new Promise<ParseResult>((resolve, reject) => {
    pending.set(id, { sql, limits, resolve, reject });
    target.postMessage({ id, sql, limits });
  });
}

/** Stops the worker (tests; the process ends it anyway). */
export async function stopParseWorker(): Promise<void> {
  const stopping = worker;
  worker = null;
  if (stopping) await stopping.terminate();
}
