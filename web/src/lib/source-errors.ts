/**
 * A source's connection errors, said plainly for the add and edit forms. vdb answers with the
 * driver's words (`connect ECONNREFUSED 127.0.0.1:5999`, `role "x" does not exist`) about the
 * name it was given, which for Test connection is a throw-away name: this says what failed, in
 * terms of the form's fields, names the field to look at, and keeps the source's own words.
 */
import { ApiError } from './api.js';

export interface SourceProblem {
  title: string;
  description: string;
  hint: string;
  /** The form field (its key) most likely wrong, or null. */
  field: string | null;
  /** What the source (or vdb) said, for the record. */
  said: string;
}

interface Rule {
  test: RegExp;
  field: string | null;
  says: (m: RegExpExecArray, where: string) => [description: string, hint: string];
}

const RULES: Rule[] = [
  {
    test: /ECONNREFUSED/,
    field: 'port',
    says: (_, where) => [
      `Nothing accepts connections at ${where}.`,
      'Check the host and port, and that the database server is running there.',
    ],
  },
  {
    test: /(?:ENOTFOUND|EAI_AGAIN)\s+(\S+)/,
    field: 'host',
    says: (m) => [`The host name "${m[1]}" is not known.`, 'Check the spelling of the host, or use its IP address.'],
  },
  {
    test: /database "([^"]+)" does not exist|Unknown database '([^']+)'/,
    field: 'db',
    says: (m) => [
      `The server has no database named "${m[1] ?? m[2]}".`,
      'Check the database name (names are case-sensitive on most servers).',
    ],
  },
  {
    test: /role "([^"]+)" does not exist/,
    field: 'user-name',
    says: (m) => [`The server has no user named "${m[1]}".`, 'Check the user name.'],
  },
  {
    test: /password authentication failed for user "([^"]+)"|Access denied for user '([^']+)'/,
    field: 'password',
    says: (m) => [`The server refused the user "${m[1] ?? m[2]}" with this password.`, 'Check the user name and the password.'],
  },
  {
    test: /no answer within the connect timeout|ETIMEDOUT|timeout expired|Connection terminated due to connection timeout/i,
    field: 'host',
    says: (_, where) => [
      `No answer from ${where} in time.`,
      'The host may be unreachable, a firewall may drop the connection, or the port may belong to another kind of server.',
    ],
  },
  {
    test: /unexpected \w+ message from backend|Connection terminated unexpectedly|Packets out of order|malformed packet|ECONNRESET/i,
    field: 'port',
    says: (_, where) => [
      `The server at ${where} does not answer as this kind of source does.`,
      'Check the port and the kind: PostgreSQL usually listens on 5432, MySQL and MariaDB on 3306.',
    ],
  },
  {
    test: /outside the allowed file roots \(([^)]*)\)/,
    field: 'path',
    says: (m) => [
      `vdb reads files only inside its file roots (${m[1]}), and this path is not in them.`,
      'Use a path inside the file roots, or have an administrator add the folder to them (fileRoots in the configuration).',
    ],
  },
  {
    test: /(?:(?:folder|file) not found: (.+))|ENOENT|no such file/i,
    field: 'path',
    says: (m) => [
      `${m[1] ? `"${m[1]}"` : 'The file or folder'} does not exist on the vdb server.`,
      'Paths are read by vdb on its own machine: check the path there.',
    ],
  },
];

/**
 * The plain account of a failed add, edit or test; null for errors that are not about reaching
 * the source (a bad name, a conflict, permissions), which are shown as the API wrote them.
 */
export function sourceProblem(error: unknown, values: Record<string, string>, name: string, probe?: string): SourceProblem | null {
  if (!(error instanceof ApiError) || (error.title !== 'Data source unavailable' && error.title !== 'Data source error')) return null;
  // The driver's words, without vdb's frame that names the (maybe throw-away) source.
  const said = error.description.replace(/^Data source "[^"]*" (?:cannot be reached|failed): /, '');
  const shown = probe ? said.split(probe).join(name || 'the new source') : said;
  const where = values.host ? `${values.host}:${values.port || 'the default port'}` : 'the source';
  for (const rule of RULES) {
    const m = rule.test.exec(said);
    if (!m) continue;
    const [description, hint] = rule.says(m, where);
    const field = rule.field === 'path' ? (values.ParentDirectory !== undefined ? 'ParentDirectory' : 'path') : rule.field;
    return { title: 'Connection failed', description, hint, field, said: shown };
  }
  return { title: 'Connection failed', description: shown, hint: 'Check the connection settings.', field: null, said: shown };
}
