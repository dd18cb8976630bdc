/**
 * The REST API's paths, parameters and bodies as TypeBox schemas, in one place: fastify checks
 * requests with them, handlers take their types from them, and the OpenAPI description
 * (/rest/api/openapi.json) is written from them. A body that fails its schema reaches the
 * handler (`attachValidation`), which answers the route's own 400 with the message docs/rest.md
 * shows. Result parameters arrive as text; params.ts turns them into values and names the bad one.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';

const text = (description: string) => Type.Optional(Type.String({ description }));
/** A query parameter: text, or several texts when repeated (the last one counts). */
const param = (description: string) => Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())], { description }));

/** Query parameters of the result endpoints (POST /query, GET /source...). */
export const ResultQuery = Type.Object(
  {
    pagination: param('true: compute the whole result once and page through it with requestId.'),
    limit: param('Most rows to return (a page with pagination); an integer of at least 0.'),
    offset: param('Rows to skip; an integer of at least 0.'),
    requestId: param('The cursor of a paginated result (also spelled requestid or requestID).'),
    requestid: param('Same as requestId.'),
    requestID: param('Same as requestId.'),
    array: param('true: rows as arrays; false: objects keyed by column name.'),
    headers: param('true (with arrays): the column names as the first row.'),
    timeout: param('Milliseconds before the statement is cancelled (504); an integer of at least 1.'),
    maxStaleness: param(
      'Seconds a local copy may lag behind its source for the statement to read it (docs/copies.md); 0: read every table live.',
    ),
  },
  { additionalProperties: true },
);
export type ResultQuery = Static<typeof ResultQuery>;

export const QueryBody = Type.Union(
  [
    Type.Object({
      sql: Type.Optional(Type.String({ description: 'One SQL statement in PostgreSQL grammar.' })),
      params: Type.Optional(
        Type.Array(Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]), {
          maxItems: 65535,
          description: 'Values of the placeholders $1, $2, ... of the statement, in order.',
        }),
      ),
    }),
    Type.Null(),
  ],
  { description: 'Optional for the later pages of a paginated result (requestId).' },
);
export type QueryBody = Static<typeof QueryBody>;

/** The names ResultQuery takes: a procedure's arguments in a GET are the other query parameters. */
export const RESULT_PARAMETERS: ReadonlySet<string> = new Set(Object.keys(ResultQuery.properties));

const ArgumentValue = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]);
const ProcedureArguments = Type.Record(Type.String(), ArgumentValue, {
  description: "A procedure's arguments by parameter name (SYS.ProcedureParams); those left out take their defaults.",
});

/** POST /rest/api/source/{schema}/{procedure}: one call, or a batch answered in order. */
export const ProcedureBody = Type.Union(
  [
    ProcedureArguments,
    Type.Array(ProcedureArguments, { minItems: 1, maxItems: 1000, description: 'Several calls; their rows are answered in order.' }),
    Type.Null(),
  ],
  { description: 'Optional for the later pages of a paginated result (requestId), and for a procedure without parameters.' },
);
export type ProcedureBody = Static<typeof ProcedureBody>;

export const SchemaParams = Type.Object({ schema: Type.String({ description: 'A schema of the virtual database.' }) });
export const TableParams = Type.Object({
  schema: Type.String(),
  table: Type.String({ description: 'A table or view, or a procedure (SYS.Procedures) to call.' }),
});
export const KeyParams = Type.Object({ id: Type.String({ description: 'The id of an API key.' }) });

/** POST /rest/api/source: the fields are checked one by one by sources/source-spec.ts. */
export const SourceBody = Type.Object(
  {
    name: text('The new schema.'),
    template: text('postgresql, mysql, sqlite, file or duckdb.'),
    translator: text('As template.'),
    connectionProps: text('key=value pairs separated by commas.'),
    modelProps: text('key=value pairs (readOnly=true, importer.schemaPattern=...).'),
    translatorProps: text('key=value pairs.'),
    description: text('Shown in SYSADMIN.DataSources.'),
  },
  { additionalProperties: true, description: 'A data source (docs/sources.md).' },
);

/** PATCH /rest/api/source/{schema}: a source's new connection (SYSADMIN.alterDataSource). */
export const SourceChangeBody = Type.Object(
  {
    connectionProps: text('key=value pairs separated by commas; replaces the connection properties.'),
    encryptedProperties: text('key=value pairs (password=...); sets the secrets named, keeps the others.'),
  },
  { additionalProperties: false, description: "A source's new connection (docs/sources.md)." },
);

export const LoginBody = Type.Object({ username: Type.String({ minLength: 1 }), password: Type.String() });
export type LoginBody = Static<typeof LoginBody>;

export const InviteAcceptBody = Type.Object({ token: Type.String(), password: Type.String() });
export type InviteAcceptBody = Static<typeof InviteAcceptBody>;

export const PreferencesBody = Type.Object({ rest: Type.Boolean() });
export type PreferencesBody = Static<typeof PreferencesBody>;

export const SavedQueryParams = Type.Object({ name: Type.String({ description: 'The name of a saved query.' }) });
export const SavedQueryBody = Type.Object({ sql: Type.String({ description: 'The statement (or script) to keep.' }) });
export type SavedQueryBody = Static<typeof SavedQueryBody>;

const ISO_DATE_TIME = '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+-]\\d{2}:\\d{2})?)?$';
export const KeyBody = Type.Object({
  name: Type.String(),
  expiresAt: Type.Optional(Type.Union([Type.String({ pattern: ISO_DATE_TIME, description: 'ISO-8601 date or date-time.' }), Type.Null()])),
  readOnly: Type.Optional(Type.Boolean()),
});
export type KeyBody = Static<typeof KeyBody>;

/** Whether the request's body failed its schema. */
export const invalidBody = (request: FastifyRequest) => request.validationError?.validationContext === 'body';

/** The field a failed body names (`expiresAt`), or '' for the body as a whole. */
export function invalidField(request: FastifyRequest): string {
  if (!invalidBody(request)) return '';
  const first = request.validationError?.validation?.[0];
  const path =
    String(first?.instancePath ?? '')
      .replace(/^\//, '')
      .split('/')[0] ?? '';
  const missing = first?.keyword === 'required' ? String((first.params as { missingProperty?: string }).missingProperty ?? '') : '';
  return path || missing;
}

const ErrorBody = Type.Object({ title: Type.String(), description: Type.String(), hint: Type.Union([Type.String(), Type.Null()]) });
const headerText = (description: string) => ({ type: 'string', description });

/**
 * What the result endpoints answer, for the OpenAPI description only (app.ts adds it there: the
 * rows are written as they come, never through a response schema).
 */
export const ResultDescription = {
  headers: Type.Object({
    accept: Type.Optional(
      Type.String({
        description:
          'The format of the rows: application/json (default), text/csv, application/x-ndjson, application/vnd.apache.arrow.stream or application/vnd.apache.parquet; q-values count. None of them: 406.',
      }),
    ),
    prefer: Type.Optional(
      Type.String({
        description: 'count=exact or count=estimated: the total row count in Content-Range (table reads and paginated requests).',
      }),
    ),
  }),
  response: {
    200: {
      description: 'The rows, in the format the Accept header chose (docs/rest.md, Result formats).',
      headers: {
        'SQL-Column-Types': headerText('The SQL types of the columns, a JSON array.'),
        'SQL-Warnings': headerText('Values loaded lossy, if any.'),
        'Content-Range': headerText('With Prefer: count=...: <first>-<last>/<total>.'),
        'Preference-Applied': headerText('count=exact or count=estimated, as counted.'),
      },
      content: {
        'application/json': { schema: Type.Array(Type.Unknown(), { description: 'Rows as arrays or objects (array, headers).' }) },
        'text/csv': { schema: Type.String({ description: 'RFC 4180, a header line, CRLF.' }) },
        'application/x-ndjson': { schema: Type.String({ description: 'One JSON object per row and line.' }) },
        'application/vnd.apache.arrow.stream': { schema: Type.String({ format: 'binary', description: 'An Arrow IPC stream.' }) },
        'application/vnd.apache.parquet': { schema: Type.String({ format: 'binary', description: 'A Parquet file (a download).' }) },
      },
    },
    406: { description: 'The Accept header names no format vdb writes; the hint lists those it does.', ...ErrorBody },
  },
};
