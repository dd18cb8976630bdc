/**
 * Error mapping for every route: ApiError -> its status and `{title, description, hint}` body;
 * fastify's own errors (bad JSON, body too large, wrong media type) -> the same body; anything
 * else -> a logged 500 without internals. The 401 page is the one HTML answer (spec section 7).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, isStackOverflow, statementTooComplex } from '../errors.js';

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
    default:
      if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
        return new ApiError(err.statusCode, 'Bad request', err.message, null);
      }
      return null;
  }
}

export function registerErrorHandling(app: FastifyInstance, authenticateUnknown?: (request: FastifyRequest) => Promise<unknown>): void {
  app.setErrorHandler((err: FastifyError | Error, request, reply) => {
    if (err instanceof UnauthorizedPage) {
      request.log.info({ reason: err.reason }, 'authentication failed');
      return sendUnauthorizedPage(reply);
    }
    // A recursion that ran out of stack on a deep statement the depth check let through: still the client's 400.
    const api = err instanceof ApiError ? err : isStackOverflow(err) ? statementTooComplex() : fromFastify(err as FastifyError);
    if (api) {
      if (api.status >= 500) request.log.warn({ status: api.status, err: api.message }, 'request failed');
      return reply.code(api.status).headers(api.headers).type('application/json; charset=utf-8').send(api.body);
    }
    request.log.error({ err }, 'unexpected error');
    return reply.code(500).type('application/json; charset=utf-8').send({
      title: 'Internal error',
      description: 'The server failed to handle the request; the failure is logged.',
      hint: null,
    });
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
