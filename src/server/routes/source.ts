/**
 * The source endpoints: the list of data sources (spec 4.4), one source's tables, one table's rows,
 * and adding, changing (the connection: PATCH) and removing sources (Data Virtuality's body for POST).
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { connectionChangeFromSpec, sourceFromSpec, type SourceSpec } from '../../sources/source-spec.js';
import { SYSTEM_SCHEMAS } from '../../sources/system-tables.js';
import { quoteIdent, sqlLiteral } from '../../runtime/duckdb.js';
import { badRequest, notFound } from '../../errors.js';
import { methodNotAllowed } from '../errors.js';
import type { Services } from '../../services.js';
import { accessOf, requireWritable } from '../auth.js';
import { parseResultParams } from '../params.js';
import { sendResult } from '../result-delivery.js';
import { callArguments, procedureOpener, procedureTarget, procedureStatement } from '../procedure-calls.js';
import {
  invalidBody,
  ProcedureBody,
  ResultQuery,
  SchemaParams,
  SourceBody,
  SourceChangeBody,
  TableParams,
  type ResultQuery as ResultQueryType,
} from '../schemas.js';

/** One object per data source and virtual schema (spec 4.4); the system schemas stay in SYS.Schemas. */
const LIST_SOURCES = `SELECT "Name" FROM SYS."Schemas" WHERE "UID" NOT LIKE 'sys:%' ORDER BY "OID"`;

export function sourceRoutes(fastify: FastifyInstance, services: Services): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const params = (query: ResultQueryType, array: boolean) => parseResultParams(query, { array, timeoutMs: services.config.queryTimeoutMs });

  // Rows are objects here unless array=true: the spec's answer is [{"Name": ...}].
  app.get(
    '/source',
    { schema: { summary: 'List the data sources and virtual schemas', querystring: ResultQuery } },
    async (request, reply) => sendResult(services, request, reply, request.user!, params(request.query, false), LIST_SOURCES, 'source'),
  );

  app.get(
    '/source/:schema',
    { schema: { summary: "List a schema's tables", params: SchemaParams, querystring: ResultQuery } },
    async (request, reply) => {
      const { schema } = request.params;
      const name = services.registry.requireSchema(schema);
      // A schema the user may see nothing of is refused, not shown empty (system schemas show to all).
      const access = accessOf(request, services);
      if (!SYSTEM_SCHEMAS.includes(name as never) && !access.seesSchema(name, services.registry.tablesOf(name))) {
        throw access.denial('R', [name], 'schema');
      }
      // Tables and views by name, then procedures by name.
      const sql = `SELECT "Name", "Type", "Description", "SchemaName" FROM (SELECT "Name", "Type", "Description", "SchemaName" FROM SYS."Tables" WHERE "SchemaName" = ${sqlLiteral(name)} UNION ALL SELECT "Name", 'Procedure', "Description", "SchemaName" FROM SYS."Procedures" WHERE "SchemaName" = ${sqlLiteral(name)}) AS objects ORDER BY "Type" = 'Procedure', "Name"`;
      return sendResult(services, request, reply, request.user!, params(request.query, false), sql, 'source');
    },
  );

  app.get(
    '/source/:schema/:table',
    {
      schema: {
        summary: "A table's rows, or a procedure's: its arguments are the other query parameters",
        params: TableParams,
        querystring: ResultQuery,
      },
    },
    async (request, reply) => {
      const { schema, table } = request.params;
      const procedure = procedureTarget(services.registry, schema, table);
      if (procedure) {
        const calls = callArguments(procedure, request.query, 'query');
        const opener = procedureOpener(services, request.user!, procedure, calls);
        const sql = procedureStatement(procedure, calls);
        return sendResult(
          services,
          request,
          reply,
          request.user!,
          params(request.query, true),
          sql,
          'source',
          undefined,
          undefined,
          opener,
        );
      }
      const resolved = services.registry.resolve(schema, table); // 404 for an unknown schema or table
      const sql = `SELECT * FROM ${quoteIdent(schema)}.${quoteIdent(table)}`;
      return sendResult(services, request, reply, request.user!, params(request.query, true), sql, 'source', undefined, resolved.table);
    },
  );

  app.post(
    '/source/:schema/:table',
    {
      schema: {
        summary: 'Call a procedure: a JSON object of arguments, or an array of them (a batch answered in order)',
        params: TableParams,
        querystring: ResultQuery,
        body: ProcedureBody,
      },
      attachValidation: true,
    },
    async (request, reply) => {
      const { schema, table } = request.params;
      const query = params(request.query, true);
      const procedure = procedureTarget(services.registry, schema, table);
      if (!procedure) {
        services.registry.resolve(schema, table); // 404 for an unknown schema or table
        // The table exists and is read with GET: a wrong method (405 with Allow), as for any resource.
        throw methodNotAllowed(
          'POST',
          request.url.split('?')[0]!,
          ['GET', 'HEAD'],
          `${schema}.${table} is a table: read its rows with GET; POST calls procedures.`,
        );
      }
      // Later pages: the body is not needed, and not run again.
      const body: unknown = request.body ?? null;
      if (query.requestId !== undefined && body === null) return sendResult(services, request, reply, request.user!, query, '', 'source');
      const calls = callArguments(procedure, body, 'body', invalidBody(request));
      const opener = procedureOpener(services, request.user!, procedure, calls);
      return sendResult(
        services,
        request,
        reply,
        request.user!,
        query,
        procedureStatement(procedure, calls),
        'source',
        undefined,
        undefined,
        opener,
      );
    },
  );
  sourceChangeRoutes(fastify, services);
}

/** POST, PATCH and DELETE of sources: adding one, changing its connection, removing it. */
function sourceChangeRoutes(fastify: FastifyInstance, services: Services): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post('/source', { schema: { summary: 'Add a data source', body: SourceBody }, attachValidation: true }, async (request, reply) => {
    accessOf(request, services).require('A', [], 'schema');
    requireWritable(request, 'add data sources');
    // The fields' values are checked by sourceFromSpec, with messages naming each.
    const body: unknown = request.body;
    if (invalidBody(request) && (typeof body !== 'object' || body === null || Array.isArray(body))) {
      throw badRequest('The body must be a JSON object describing the data source.', 'See docs/sources.md for the fields.');
    }
    const source = await services.registry.addSource(sourceFromSpec(body as SourceSpec));
    request.log.info({ source: source.name, kind: source.kind }, 'data source added');
    if (source.tables.length === 0) request.log.warn({ source: source.name }, 'data source added without tables');
    services.auditLog.record({
      user: request.user!.name,
      action: 'add data source',
      target: source.name,
      outcome: 'ok',
      address: request.ip,
    });
    return reply.code(201).send(services.registry.describe(source));
  });

  app.patch(
    '/source/:schema',
    { schema: { summary: "Change a data source's connection", params: SchemaParams, body: SourceChangeBody }, attachValidation: true },
    async (request, reply) => {
      requireWritable(request, 'change data sources');
      const { schema } = request.params;
      const named = services.registry.findSource(schema);
      if (named) accessOf(request, services).require('A', [named.name], 'schema');
      if (!named) throw notFound(`Data source "${schema}" does not exist.`, 'GET /rest/api/source lists the sources.', 'Unknown source');
      if (invalidBody(request)) {
        throw badRequest(
          'The body must be a JSON object with connectionProps and/or encryptedProperties (strings).',
          'See docs/sources.md, "SQL procedures" (alterDataSource).',
        );
      }
      const body = request.body;
      const change = connectionChangeFromSpec(named.kind, named.model, body.connectionProps, body.encryptedProperties);
      const record = (outcome: 'ok' | 'failed') =>
        services.auditLog.record({
          user: request.user!.name,
          action: 'alter data source',
          target: named.name,
          outcome,
          address: request.ip,
        });
      let source;
      try {
        source = await services.registry.alterSource(named.name, change);
      } catch (err) {
        record('failed');
        throw err;
      }
      request.log.info({ source: source.name }, 'data source connection changed');
      record('ok');
      return reply.code(200).send(services.registry.describe(source));
    },
  );

  app.delete('/source/:schema', { schema: { summary: 'Remove a data source', params: SchemaParams } }, async (request, reply) => {
    requireWritable(request, 'remove data sources');
    const { schema } = request.params;
    const named = services.registry.findSource(schema);
    if (named) accessOf(request, services).require('A', [named.name], 'schema');
    const source = await services.registry.removeSource(schema);
    request.log.info({ source: source.name }, 'data source removed');
    services.auditLog.record({
      user: request.user!.name,
      action: 'remove data source',
      target: source.name,
      outcome: 'ok',
      address: request.ip,
    });
    return reply.code(204).send();
  });
}
