/**
 * The console's REST client. It uses only the public API of docs/rest.md: /api/login and
 * /api/invite/accept without credentials, everything else under /rest/api with the login token
 * in x-auth-token. Errors become ApiError with the API's {title, description, hint}.
 */

import { parseJson, type JsonValue } from './json.js';
import { CONSOLE_MARK } from './mark.js';

/**
 * The console's own statements (catalog, health, roles) run at most this many at once: vdb caps
 * each user's concurrent statements (statements.maxPerUser, 4 by default), and the user's own
 * statements must not be refused because the console read its catalog meanwhile.
 */
const OWN_AT_ONCE = 2;

export interface ErrorBody {
  title: string;
  description: string;
  hint: string | null;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly description: string,
    readonly hint: string | null,
  ) {
    super(`${title}: ${description}`);
  }
}

export interface Session {
  username: string;
  token: string;
}

/** A value as the API sent it; numbers keep their digits (Num), see json.ts. */
export type Cell = JsonValue;
export type Row = Cell[];

export interface Result {
  columns: string[];
  /** SQL types from the SQL-Column-Types header; empty when the server sends none. */
  types: string[];
  rows: Row[];
}

export interface CursorPage extends Result {
  requestId: string;
  /** True when the server announced a next chunk (nextPage header). */
  more: boolean;
  /** The cursor's row count (Content-Range, asked for with Prefer: count=exact); null when not sent. */
  total: number | null;
  warnings: string | null;
}

export interface Preferences {
  rest: boolean;
  link: string;
  databaseUsername: string;
}

export interface SavedQuery {
  name: string;
  sql: string;
  savedAt: string;
}

export interface ApiKey {
  id: string;
  owner: string;
  name: string;
  expiresAt: string | null;
  readOnly: boolean;
  createdAt: string;
  /** Only in the answer that created the key. */
  key?: string;
}

export interface SourceSpec {
  name: string;
  template: string;
  connectionProps: string;
  modelProps?: string;
  encryptedProperties?: string;
  description?: string;
}

export interface RequestOptions {
  method?: string;
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined>;
  signal?: AbortSignal;
  /** The result format to ask for (Accept); JSON when absent. */
  accept?: string;
  /** Preferences (Prefer), e.g. count=exact. */
  prefer?: string;
}

/** Reads an error response; the 401 page is HTML, every other error is JSON. */
async function errorOf(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => '');
  try {
    const body = JSON.parse(text) as Partial<ErrorBody>;
    if (typeof body.title === 'string') {
      return new ApiError(response.status, body.title, String(body.description ?? ''), body.hint ?? null);
    }
  } catch {
    // not JSON: described below
  }
  if (response.status === 401) {
    return new ApiError(401, 'Signed out', 'Your sign-in is missing, expired or was revoked.', 'Sign in again.');
  }
  return new ApiError(response.status, `HTTP ${response.status}`, text.slice(0, 500) || response.statusText, null);
}

/** The rows of a JSON answer, numbers kept exact, each list or object cell as the text it came as. */
const rowsOf = async (response: Response) => parseJson(await response.text(), 2);

/** The total of a Content-Range header (`0-499/100000`; no rows: a star, then `/0`). */
export function totalOf(header: string | null): number | null {
  const total = /\/(\d+)$/.exec(header ?? '')?.[1];
  return total === undefined ? null : Number(total);
}

/** Parses the SQL-Column-Types header (a JSON array of type names). */
export function parseTypes(header: string | null, count: number): string[] {
  if (!header) return [];
  try {
    const types: unknown = JSON.parse(header);
    if (Array.isArray(types) && types.length === count) return types.map(String);
  } catch {
    // an unreadable header only loses the types
  }
  return [];
}

export class Api {
  constructor(
    /** Base URL of vdb, ending in a slash (the console's own location). */
    readonly base: string,
    private session: Session | null = null,
    /** Called when the API answers 401 to a signed-in request: the token is no longer good. */
    private readonly onUnauthorized: () => void = () => undefined,
  ) {}

  get user(): string | null {
    return this.session?.username ?? null;
  }

  url(path: string, query: RequestOptions['query'] = {}): string {
    const url = new URL(path, this.base);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
    return url.toString();
  }

  async request(path: string, options: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = {};
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (this.session) headers['x-auth-token'] = this.session.token;
    if (options.accept) headers.accept = options.accept;
    if (options.prefer) headers.prefer = options.prefer;
    const response = await fetch(this.url(path, options.query), {
      method: options.method ?? (options.body === undefined ? 'GET' : 'POST'),
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal,
      // The API's 401 carries WWW-Authenticate: Basic. With credentials the browser would answer it
      // with its own password prompt (and the request would wait for it); without, the console
      // sees the 401 and returns to its sign-in screen. The token goes in a header anyway.
      credentials: 'omit',
    });
    if (!response.ok) {
      const error = await errorOf(response);
      if (response.status === 401 && this.session && path.startsWith('rest/')) this.onUnauthorized();
      throw error;
    }
    return response;
  }

  async json<T>(path: string, options: RequestOptions = {}): Promise<T> {
    const response = await this.request(path, options);
    return (response.status === 204 ? undefined : await response.json()) as T;
  }

  // Sign-in and invitations: no credentials.

  async login(username: string, password: string): Promise<Session> {
    const answer = await this.json<Session>('api/login', { body: { username, password } });
    this.session = answer;
    return answer;
  }

  acceptInvite(token: string, password: string): Promise<{ username: string }> {
    return this.json('api/invite/accept', { body: { token, password } });
  }

  // Statements.

  /** Runs a statement and returns the whole result (for small results: catalog, logs, CALLs). */
  async query(sql: string, signal?: AbortSignal): Promise<Result> {
    const run = async () => {
      const response = await this.request('rest/api/query', { body: { sql }, query: { headers: true }, signal });
      const [columns = [], ...rows] = (await rowsOf(response)) as [string[], ...Row[]];
      return { columns, types: parseTypes(response.headers.get('sql-column-types'), columns.length), rows };
    };
    return sql.startsWith(CONSOLE_MARK) ? this.paced(run) : run();
  }

  /** Runs one of the console's own requests when fewer than OWN_AT_ONCE of them are running. */
  async paced<T>(work: () => Promise<T>): Promise<T> {
    await this.ownSlot();
    try {
      return await work();
    } finally {
      this.releaseOwnSlot();
    }
  }

  private ownRunning = 0;
  private readonly ownWaiting: Array<() => void> = [];

  private async ownSlot(): Promise<void> {
    if (this.ownRunning < OWN_AT_ONCE) {
      this.ownRunning++;
      return;
    }
    // The slot is handed over by releaseOwnSlot, so the count stays the same.
    await new Promise<void>((resolve) => this.ownWaiting.push(resolve));
  }

  private releaseOwnSlot(): void {
    const next = this.ownWaiting.shift();
    if (next) next();
    else this.ownRunning--;
  }

  /** Runs a statement into a cursor (pagination) and returns its first chunk. */
  async openCursor(sql: string, limit: number, signal?: AbortSignal): Promise<CursorPage> {
    const response = await this.request('rest/api/query', {
      body: { sql },
      query: { pagination: true, limit, headers: true },
      signal,
      prefer: 'count=exact',
    });
    const [columns = [], ...rows] = (await rowsOf(response)) as [string[], ...Row[]];
    return {
      columns,
      types: parseTypes(response.headers.get('sql-column-types'), columns.length),
      rows,
      requestId: response.headers.get('requestid') ?? '',
      more: response.headers.has('nextpage'),
      total: totalOf(response.headers.get('content-range')),
      warnings: response.headers.get('sql-warnings'),
    };
  }

  /**
   * The first `limit` rows of a statement, streamed without a cursor: they come long before a
   * cursor of the whole result is built. Sent as one of the console's own statements (marked,
   * so the history shows the user's statement once), but not paced: it belongs to a user's run.
   */
  async firstRows(sql: string, limit: number, signal?: AbortSignal): Promise<Result> {
    const response = await this.request('rest/api/query', {
      body: { sql: `${CONSOLE_MARK} ${sql}` },
      query: { limit, headers: true },
      signal,
    });
    const [columns = [], ...rows] = (await rowsOf(response)) as [string[], ...Row[]];
    return { columns, types: parseTypes(response.headers.get('sql-column-types'), columns.length), rows };
  }

  /** One chunk of an existing cursor; nothing is computed again. */
  async page(requestId: string, offset: number, limit: number, signal?: AbortSignal): Promise<Row[]> {
    const response = await this.request('rest/api/query', { method: 'POST', query: { requestId, offset, limit }, signal });
    return (await rowsOf(response)) as Row[];
  }

  /** One chunk of an existing cursor as CSV, written by vdb (its header line first); `more` while chunks follow. */
  async csvPage(requestId: string, offset: number, limit: number, signal?: AbortSignal): Promise<{ text: string; more: boolean }> {
    const response = await this.request('rest/api/query', {
      method: 'POST',
      query: { requestId, offset, limit },
      signal,
      accept: 'text/csv',
    });
    return { text: await response.text(), more: response.headers.has('nextpage') };
  }

  /** One chunk of an existing cursor in another format (Accept), as bytes; `more` while chunks follow. */
  async pageAs(
    requestId: string,
    offset: number,
    limit: number,
    accept: string,
    query: Record<string, string | boolean> = {},
  ): Promise<{ body: Blob; more: boolean }> {
    const response = await this.request('rest/api/query', { method: 'POST', query: { requestId, offset, limit, ...query }, accept });
    return { body: await response.blob(), more: response.headers.has('nextpage') };
  }

  // Sources.

  async schemas(): Promise<string[]> {
    const rows = await this.json<Array<{ Name: string }>>('rest/api/source');
    return rows.map((r) => r.Name);
  }

  /** A schema's tables and views, then its procedures (Type "Procedure"). */
  objects(schema: string): Promise<Array<{ Name: string; Type: string; Description: string | null }>> {
    return this.json(`rest/api/source/${encodeURIComponent(schema)}`);
  }

  /** A schema's tables and views. */
  async tables(schema: string): Promise<Array<{ Name: string; Type: string; Description: string | null }>> {
    return (await this.objects(schema)).filter((o) => o.Type !== 'Procedure');
  }

  async preview(schema: string, table: string, limit: number): Promise<Result> {
    const response = await this.request(`rest/api/source/${encodeURIComponent(schema)}/${encodeURIComponent(table)}`, {
      query: { headers: true, limit },
    });
    const [columns = [], ...rows] = (await rowsOf(response)) as [string[], ...Row[]];
    return { columns, types: parseTypes(response.headers.get('sql-column-types'), columns.length), rows };
  }

  addSource(spec: SourceSpec): Promise<{ name: string; tables: string[] }> {
    return this.json('rest/api/source', { body: spec });
  }

  /** PATCH: new connection properties and/or secrets, checked by vdb before they are stored. */
  alterSource(name: string, change: { connectionProps?: string; encryptedProperties?: string }): Promise<unknown> {
    return this.json(`rest/api/source/${encodeURIComponent(name)}`, { method: 'PATCH', body: change });
  }

  async removeSource(name: string): Promise<void> {
    await this.request(`rest/api/source/${encodeURIComponent(name)}`, { method: 'DELETE' });
  }

  // Preferences and API keys.

  preferences(): Promise<Preferences> {
    return this.json('rest/api/preferences');
  }

  setRest(rest: boolean): Promise<Preferences> {
    return this.json('rest/api/preferences', { method: 'PUT', body: { rest } });
  }

  /** The user's saved queries, by name (kept by vdb, so they follow the user everywhere). */
  savedQueries(): Promise<SavedQuery[]> {
    return this.json('rest/api/preferences/queries');
  }

  saveQuery(name: string, sql: string): Promise<SavedQuery> {
    return this.json(`rest/api/preferences/queries/${encodeURIComponent(name)}`, { method: 'PUT', body: { sql } });
  }

  async deleteQuery(name: string): Promise<void> {
    await this.request(`rest/api/preferences/queries/${encodeURIComponent(name)}`, { method: 'DELETE' });
  }

  keys(): Promise<ApiKey[]> {
    return this.json('rest/api/keys');
  }

  createKey(name: string, expiresAt: string | null, readOnly: boolean): Promise<ApiKey> {
    return this.json('rest/api/keys', { body: { name, expiresAt, readOnly } });
  }

  async revokeKey(id: string): Promise<void> {
    await this.request(`rest/api/keys/${encodeURIComponent(id)}`, { method: 'DELETE' });
  }
}
