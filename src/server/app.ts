/**
 * The HTTP application: fastify with JSON-only bodies, the error mapping, the login route, and
 * the /rest/api routes mounted twice: on-premise (/rest/api) and hosted (/{linkToken}/rest/api).
 */
import { catalogUnavailable } from '../catalog/store.js';
import fs from 'node:fs';
import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { Services } from '../services.js';
import { authenticate } from './auth.js';
import { frameworkErrorOptions, MAX_PARAM_LENGTH, registerErrorHandling } from './errors.js';
import { keyRoutes } from './routes/keys.js';
import { loginRoutes } from './routes/login.js';
import { preferencesRoutes } from './routes/preferences.js';
import { queryRoutes } from './routes/query.js';
import { sourceRoutes } from './routes/source.js';
import { statusRoutes } from './routes/status.js';
import { healthRoutes, metricsRoutes } from './routes/operations.js';
import { badRequest } from '../errors.js';
import { consoleRoutes } from './console.js';
import { ResultDescription, ResultQuery } from './schemas.js';

/** Never log a hosted link token: it is a credential in the path. */
const redactUrl = (url: string) => url.replace(/^\/[^/?]+\/rest\//, '/<link>/rest/');

export function buildApp(services: Services, logger: boolean | object = true): FastifyInstance {
  const app = Fastify({
    logger:
      logger === false
        ? false
        : {
            level: services.config.logLevel,
            ...(typeof logger === 'object' ? logger : {}),
            serializers: {
              req: (req: { method: string; url: string }) => ({ method: req.method, url: redactUrl(req.url) }),
            },
          },
    bodyLimit: services.config.bodyLimit,
    // Trusting a proxy means the one in front of vdb: the client address is the one that proxy
    // saw (the last X-Forwarded-For entry), not one a client may have written in front of it.
    trustProxy: services.config.trustProxy ? (_address: string, hop: number) => hop === 0 : false,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // Malformed requests, bad paths and a bad Host get the JSON error body too (errors.ts).
    ...frameworkErrorOptions,
    // Values are what the client sent: a number where a string belongs is an error, not "5".
    ajv: { customOptions: { coerceTypes: false } },
    ...(services.config.tls
      ? {
          https: {
            cert: fs.readFileSync(services.config.tls.certFile),
            key: fs.readFileSync(services.config.tls.keyFile),
            ...frameworkErrorOptions.http,
          },
        }
      : {}),
    // An HTTPS server has the same routes and plugins; only its server type differs.
  }) as unknown as FastifyInstance;
  app.decorateRequest('user', null);
  app.decorateRequest('apiKey', null);

  jsonBodies(app);
  describeApi(app, services);
  registerErrorHandling(
    app,
    async (request) => {
      const link = /^\/([^/?]+)\/rest\/api/.exec(request.url)?.[1];
      (request as { params: unknown }).params = link ? { linkToken: link } : {};
      return authenticate(request, services);
    },
    // A fatal error of the engine's own leaves it refusing every statement: a new one takes over.
    () => {
      services.runtime.renewIfBroken().then(
        (renewed) => renewed && app.log.warn('the engine failed and was replaced; what it held (its cursors) is lost'),
        (err: unknown) => app.log.error({ err }, 'the engine failed and could not be replaced'),
      );
    },
  );
  // While stopping, each answer ends its connection, so that closing the server waits for nothing more.
  // (Hooks in the callback form: no promise per request.)
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (services.lifecycle.stopping) reply.header('connection', 'close');
    done(null, payload);
  });
  // Requests by route pattern (never the raw path: a hosted link token is a credential).
  app.addHook('onResponse', (request, reply, done) => {
    services.metrics.observeRequest(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  registerRoutes(app, services);
  return app;
}

/** JSON bodies only; anything else is a 415 by fastify's own check. */
function jsonBodies(app: FastifyInstance): void {
  // JSON only (spec 1, limitation 1). An empty body is allowed: later pagination requests
  // carry only requestId. Anything not JSON is a 415 by fastify's own check.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json(\s*;.*)?$/i, { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      done(badRequest(`The body is not valid JSON: ${(err as Error).message}`, 'Check quotes and commas.', 'Invalid JSON'), undefined);
    }
  });
}

/** The OpenAPI description, written from the routes' schemas (schemas.ts). */
function describeApi(app: FastifyInstance, services: Services): void {
  // The OpenAPI description is written from the routes' schemas (schemas.ts).
  void app.register(swagger, {
    openapi: {
      info: {
        title: 'vdb REST API',
        version: services.version,
        description:
          'SQL over REST on one virtual database. Every /rest/api path is also served under /{linkToken}/rest/api (the hosted link). Errors are {title, description, hint}; a request without valid credentials gets 401 and an HTML page.',
      },
      components: {
        securitySchemes: {
          basic: { type: 'http', scheme: 'basic' },
          token: { type: 'apiKey', in: 'header', name: 'x-auth-token' },
          apiKey: { type: 'http', scheme: 'bearer' },
        },
      },
      security: [{ basic: [] }, { token: [] }, { apiKey: [] }],
    },
    // The hosted copies of the routes are the same API: described once.
    // The result endpoints (those with ResultQuery) are described with their formats, headers and 406.
    transform: ({ schema, url }) => {
      const described = schema?.querystring === ResultQuery ? { ...schema, ...ResultDescription } : schema;
      return { schema: url.startsWith('/:linkToken') ? { ...described, hide: true } : described, url };
    },
  });
}

/** The operations routes, sign-in, the REST API on-premise (/rest/api) and hosted (/{linkToken}/rest/api), and the console. */
function registerRoutes(app: FastifyInstance, services: Services): void {
  healthRoutes(app, services);
  if (services.config.metricsPort === null) metricsRoutes(app, services);
  // Users, grants and sources come from the catalog: without its database nothing can be checked (503).
  const requireCatalog = async () => {
    if (!services.store.available) throw catalogUnavailable(services.store.unavailableReason);
  };
  // In a plugin of its own, so that it is registered after swagger, which describes it.
  void app.register(async (instance) => {
    instance.addHook('onRequest', requireCatalog);
    loginRoutes(instance, services);
  });

  for (const prefix of ['/rest/api', '/:linkToken/rest/api']) {
    void app.register(
      async (rest) => {
        rest.addHook('onRequest', async (request) => {
          await requireCatalog();
          await authenticate(request, services);
        });
        statusRoutes(rest);
        queryRoutes(rest, services);
        sourceRoutes(rest, services);
        preferencesRoutes(rest, services);
        keyRoutes(rest, services);
        rest.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
      },
      { prefix },
    );
  }
  // The web console (docs/console.md): its built files at /, after the API so it shadows none.
  void app.register(async (instance) => consoleRoutes(instance));
}
