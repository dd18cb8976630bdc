/**
 * Error mapping for every route: ApiError -> its status and `{title, description, hint}` body;
 * fastify's own errors (bad JSON, body too large, wrong media type) -> the same body; anything
 * else -> a logged 500 without internals. The 401 page is the one HTML answer (spec section 7).
 * Requests that fail before a route is found (a malformed path, an overlong path segment, bytes
 * that are not HTTP, a bad Host) get the same body too: see frameworkErrorOptions and checkHost.
 */
import net from 'node:net';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { ApiError, badRequest, isStackOverflow, statementTooComplex } from '../errors.js';
import { ownStorageFailure } from '../runtime/storage-errors.js';

export const UNAUTHORIZED_PAGE =
  '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Error</title></head>' +
  '<body><h1>Error</h1><p>Unauthorized: Authentication token was either missing or invalid.</p></body></html>\n';

/** Thrown by the auth hook; rendered as the HTML 401 page. */
export class UnauthorizedPage extends Error {
  constructor(readonly reason: string) {
    super(`unauthorized: ${reason}`);
  }
}

export function sendUnauthorizedPage(reply: FastifyReply): FastifyReply {
  return reply
    .code(401)
    .header('content-type', 'text/html; charset=utf-8')
    .header('www-authenticate', 'Basic realm="vdb", charset="UTF-8"')
    .send(UNAUTHORIZED_PAGE);
}

function fromFastify(err: FastifyError): ApiError | null {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(413, 'Request body too large', err.message, 'Send a smaller body; the limit is configurable (bodyLimit).');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(
        415,
        'Unsupported media type',
        'Only JSON request bodies are accepted.',
        'Send the header Content-Type: application/json.',
      );
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError(400, 'Bad request', err.message, null);
    case 'FST_ERR_BAD_URL':
      return badRequest(
        'The path is not valid: it holds a malformed percent-encoding (% must be followed by two hex digits of UTF-8).',
        'Encode names with encodeURIComponent (a % itself is %25).',
      );
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ApiError(
        414,
        'Path too long',
        `A segment of the path is longer than ${MAX_PARAM_LENGTH} characters.`,
        'Schema, table and key names are shorter; check the path.',
      );
    default:
      if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
        return new ApiError(err.statusCode, 'Bad request', err.message, null);
      }
      return null;
  }
}

/** Longest path segment (a schema, table, key id or link token, percent-encoded) the router takes. */
export const MAX_PARAM_LENGTH = 1000;

const json = (reply: FastifyReply, api: ApiError) =>
  reply.code(api.status).headers(api.headers).type('application/json; charset=utf-8').send(api.body);

/** Errors of the router before any route or hook runs: the JSON body, never fastify's own. */
function onFrameworkError(err: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  void json(reply, fromFastify(err) ?? badRequest('The request could not be routed.'));
}

/** Node's parser errors, for a client that sent something that is not HTTP/1.1. */
const PARSE_ERRORS: Record<string, string> = {
  HPE_INVALID_METHOD: 'the method is not a valid HTTP method',
  HPE_INVALID_URL: 'the request target is not a valid URL',
  HPE_INVALID_VERSION: 'the HTTP version is not valid',
  HPE_INVALID_HEADER_TOKEN: 'a header name or value holds characters HTTP does not allow',
  HPE_INVALID_CONTENT_LENGTH: 'Content-Length is not a number',
  HPE_UNEXPECTED_CONTENT_LENGTH: 'Content-Length and Transfer-Encoding: chunked together',
  HPE_INVALID_TRANSFER_ENCODING: 'Transfer-Encoding is not valid',
  HPE_INVALID_CHUNK_SIZE: 'a chunk size of the chunked body is not valid',
  HPE_INVALID_CONSTANT: 'the request line or a header is malformed',
  HPE_LF_EXPECTED: 'a line does not end with CRLF',
  HPE_CR_EXPECTED: 'a line does not end with CRLF',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'the chunk extensions are too large',
  HPE_INVALID_EOF_STATE: 'the connection ended before the whole request arrived (a body cut short of its Content-Length or last chunk)',
};

/** What the client gets for an error of Node's HTTP parser or its request timeout (JSON, then close). */
export function clientErrorAnswer(err: NodeJS.ErrnoException): ApiError {
  const code = err.code ?? '';
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return new ApiError(
      408,
      'Request timeout',
      `The request did not arrive within ${REQUEST_TIMEOUT_MS / 1000} s.`,
      'Send the whole request at once.',
    );
  }
  if (code === 'HPE_HEADER_OVERFLOW') {
    return new ApiError(
      431,
      'Request headers too large',
      'The request line and headers exceed the 16 KiB Node.js accepts.',
      'Send shorter headers; a statement belongs in the JSON body, not the URL.',
    );
  }
  const reason = PARSE_ERRORS[code] ?? 'the request could not be parsed';
  return badRequest(`The request is not valid HTTP/1.1: ${reason}.`, null);
}

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

function onClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const api = clientErrorAnswer(err);
    const body = JSON.stringify(api.body);
    socket.write(
      `HTTP/1.1 ${api.status} ${STATUS_TEXT[api.status] ?? 'Bad Request'}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/** How long a client may take to send a whole request (line, headers and body): 408 after it. */
export const REQUEST_TIMEOUT_MS = 60_000;

/**
 * Fastify options that give the router's and the HTTP parser's errors vdb's JSON body. Node does
 * not check Host itself (requireHostHeader: false): checkHost answers its 400 with that body.
 */
export const frameworkErrorOptions = {
  frameworkErrors: onFrameworkError,
  clientErrorHandler: onClientError,
  requestTimeout: REQUEST_TIMEOUT_MS,
  http: { requireHostHeader: false },
};

const LABEL = '[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62})';
const HOST_FORM = new RegExp(`^(?:(${LABEL}(?:\\.${LABEL})*\\.?)|\\[([0-9A-Fa-f:.]+)\\])(?::(\\d{1,5}))?$`);

/** Whether `host` is a host name, IPv4 or [IPv6] address, with an optional port: what a link may carry. */
export function isValidHost(host: string): boolean {
  const match = HOST_FORM.exec(host);
  if (!match || host.length > 262) return false;
  if (match[2] !== undefined && !net.isIPv6(match[2])) return false;
  return match[3] === undefined || Number(match[3]) <= 65535;
}

/**
 * The Host (or, behind a trusted proxy, X-Forwarded-Host and -Proto) of every request is checked
 * before anything else: page links and the hosted link are built from them, so a malformed one
 * never reaches that code. HTTP/1.1 requires Host; HTTP/1.0 may leave it out.
 */
export function checkHost(request: FastifyRequest): void {
  const raw = request.headers.host;
  if (raw === undefined || raw === '') {
    if (request.raw.httpVersionMajor === 1 && request.raw.httpVersionMinor === 0 && !request.headers['x-forwarded-host']) return;
    throw badRequest(
      'The request has no Host header.',
      'HTTP/1.1 requires Host: the server name and port the client connected to.',
      'Bad Host header',
    );
  }
  if (!isValidHost(request.host)) {
    throw badRequest(
      `The Host header is not a host name with an optional port: "${request.host.slice(0, 100)}".`,
      'Send Host: name[:port], e.g. localhost:8080.',
      'Bad Host header',
    );
  }
  if (request.protocol !== 'http' && request.protocol !== 'https') {
    throw badRequest(`X-Forwarded-Proto must be http or https, got "${String(request.protocol).slice(0, 20)}".`, null, 'Bad request');
  }
}

/** `scheme://host` of the request's links; a request without Host (HTTP/1.0) gets the address it reached. */
export function originOf(request: FastifyRequest): string {
  let host = request.host;
  if (!host) {
    const address = request.raw.socket.localAddress ?? '127.0.0.1';
    host = `${net.isIPv6(address) ? `[${address}]` : address}:${request.raw.socket.localPort ?? 80}`;
  }
  return `${request.protocol}://${host}`;
}

/** Route patterns by method, to tell an unknown path (404) from a wrong method (405). */
class RouteTable {
  private readonly routes: Array<{ pattern: RegExp; methods: string[] }> = [];

  add(route: RouteOptions): void {
    const url = route.url.replace(/\/+$/, '');
    const source = url
      .split('/')
      .map((part) => (part.startsWith(':') ? '[^/]+' : part === '*' ? '.*' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    this.routes.push({ pattern: new RegExp(`^${source}/?$`), methods: methods.map(String) });
  }

  /** The methods served on `path` (none: an unknown path). */
  methodsOf(path: string): string[] {
    const found = new Set<string>();
    for (const route of this.routes) if (route.pattern.test(path)) for (const m of route.methods) found.add(m.toUpperCase());
    const order = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
    return [...found].sort((a, b) => order.indexOf(a) - order.indexOf(b));
  }
}

/** A 405 naming the methods the path takes, with the Allow header. */
export function methodNotAllowed(method: string, path: string, allowed: readonly string[], hint: string | null = null): ApiError {
  return new ApiError(
    405,
    'Method not allowed',
    `${method} is not served on ${path}; it takes ${allowed.join(', ')}.`,
    hint ?? 'See docs/rest.md for the endpoints and their methods.',
    { allow: allowed.join(', ') },
  );
}

export function registerErrorHandling(
  app: FastifyInstance,
  authenticateUnknown?: (request: FastifyRequest) => Promise<unknown>,
  /** Told of every error nobody expected (after it is logged), such as a fatal error of the engine. */
  onUnexpected?: (err: Error) => void,
): void {
  app.setErrorHandler((err: FastifyError | Error, request, reply) => {
    if (err instanceof UnauthorizedPage) {
      request.log.info({ reason: err.reason }, 'authentication failed');
      return sendUnauthorizedPage(reply);
    }
    // A recursion that ran out of stack on a deep statement the depth check let through: still the client's 400.
    // vdb's own disk full or read-only where no module mapped it: still a 507/503 naming vdb, not a bare 500.
    const api =
      err instanceof ApiError
        ? err
        : isStackOverflow(err)
          ? statementTooComplex()
          : (fromFastify(err as FastifyError) ?? ownStorageFailure(err));
    if (api) {
      if (api.status >= 500) request.log.warn({ status: api.status, err: api.message }, 'request failed');
      return json(reply, api);
    }
    // A client that left while its rows were sent: nothing went wrong here, nobody to answer.
    if ((err as { code?: string }).code === 'ERR_STREAM_PREMATURE_CLOSE' && reply.raw.destroyed) {
      request.log.debug('client closed the connection during the response');
      return reply;
    }
    request.log.error({ err }, 'unexpected error');
    onUnexpected?.(err);
    return reply.code(500).type('application/json; charset=utf-8').send({
      title: 'Internal error',
      description: 'The server failed to handle the request; the failure is logged.',
      hint: null,
    });
  });

  const routes = new RouteTable();
  app.addHook('onRoute', (route) => routes.add(route));
  // Hooks in the callback form: no promise per request.
  app.addHook('onRequest', (request, _reply, done) => {
    try {
      checkHost(request);
    } catch (err) {
      done(err as Error);
      return;
    }
    done();
  });

  app.setNotFoundHandler(async (request, reply) => {
    // Under /rest/api nothing, not even which paths exist, is shown without credentials.
    if (authenticateUnknown && /^\/([^/?]+\/)?rest\/api(\/|$|\?)/.test(request.url)) {
      try {
        await authenticateUnknown(request);
      } catch (err) {
        // A throttled caller learns that, not that the credentials were wrong.
        if (err instanceof ApiError) {
          return reply.code(err.status).headers(err.headers).type('application/json; charset=utf-8').send(err.body);
        }
        return sendUnauthorizedPage(reply);
      }
    }
    const path = request.url.split('?')[0] ?? '/';
    const allowed = routes.methodsOf(path);
    if (allowed.length > 0) return json(reply, methodNotAllowed(request.method, path, allowed));
    return reply
      .code(404)
      .type('application/json; charset=utf-8')
      .send({
        title: 'Not found',
        description: `No endpoint ${request.method} ${request.url.split('?')[0]}.`,
        hint: 'The REST endpoints are under /rest/api/ (see docs/rest.md).',
      });
  });
}
