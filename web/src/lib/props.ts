/** The add-source form: fields per connector kind (docs/sources.md) and the description they make. */
import type { SourceSpec } from './api.js';

export interface Field {
  key: string;
  label: string;
  /** connection: connectionProps; secret: encryptedProperties; model: modelProps. */
  part: 'connection' | 'secret' | 'model';
  placeholder?: string;
  required?: boolean;
  type?: 'text' | 'password';
  numeric?: boolean;
}

export interface Kind {
  template: string;
  label: string;
  fields: Field[];
}

const server = (port: string, database: string, pattern: string): Field[] => [
  { key: 'host', label: 'Host', part: 'connection', placeholder: '127.0.0.1', required: true },
  { key: 'port', label: 'Port', part: 'connection', placeholder: port, numeric: true },
  { key: 'db', label: 'Database', part: 'connection', placeholder: database },
  { key: 'user-name', label: 'User', part: 'connection', required: true },
  { key: 'password', label: 'Password', part: 'secret', type: 'password' },
  { key: 'importer.schemaPattern', label: pattern, part: 'model' },
];

export const KINDS: Kind[] = [
  { template: 'postgresql', label: 'PostgreSQL', fields: server('5432', 'postgres', 'Schema (importer.schemaPattern)') },
  { template: 'mysql', label: 'MySQL / MariaDB', fields: server('3306', 'shop', 'Database to import (importer.schemaPattern)') },
  { template: 'sqlite', label: 'SQLite file', fields: [{ key: 'path', label: 'File path', part: 'connection', required: true }] },
  {
    template: 'file',
    label: 'Files (CSV, Parquet, JSON)',
    fields: [{ key: 'ParentDirectory', label: 'Folder', part: 'connection', required: true, placeholder: '<data dir>/files/...' }],
  },
  { template: 'duckdb', label: 'DuckDB file', fields: [{ key: 'path', label: 'File path', part: 'connection', required: true }] },
];

/** A backslash before \, comma and equals sign, as the API reads property strings. */
const escape = (text: string) => text.replace(/[\\,=]/g, (ch) => `\\${ch}`);

const props = (entries: Array<[string, string]>) => entries.map(([k, v]) => `${escape(k)}=${escape(v)}`).join(',');

/** The body of POST /rest/api/source for a kind and the form's values (empty values left out). */
export function sourceSpec(name: string, kind: Kind, values: Record<string, string>, description = ''): SourceSpec {
  const part = (p: Field['part']) =>
    props(kind.fields.filter((f) => f.part === p && (values[f.key] ?? '').trim() !== '').map((f) => [f.key, values[f.key]!.trim()]));
  const spec: SourceSpec = { name: name.trim(), template: kind.template, connectionProps: part('connection') };
  const model = part('model');
  const secret = part('secret');
  if (model) spec.modelProps = model;
  if (secret) spec.encryptedProperties = secret;
  if (description.trim()) spec.description = description.trim();
  return spec;
}

/** Fields the form still lacks, by label. */
export const missingFields = (kind: Kind, values: Record<string, string>): string[] =>
  kind.fields.filter((f) => f.required && !(values[f.key] ?? '').trim()).map((f) => f.label);

/** Property text (`host=h,port=5432`, with \\ escapes) as key -> value: the inverse of the form's writing. */
export function parseProps(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  let key = '';
  let current = '';
  let inKey = true;
  const end = () => {
    if (inKey ? current : key) out[inKey ? current : key] = inKey ? '' : current;
    key = '';
    current = '';
    inKey = true;
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '\\' && i + 1 < text.length) current += text[++i];
    else if (ch === '=' && inKey) {
      key = current;
      current = '';
      inKey = false;
    } else if (ch === ',') end();
    else current += ch;
  }
  end();
  return out;
}

/**
 * The PATCH body of an edit: the kind's connection fields as typed, the source's other connection
 * properties (`connectTimeoutMs`, …) as they were, and a secret only when one was typed (a blank
 * password keeps the stored one).
 */
export function alteration(
  kind: Kind,
  values: Record<string, string>,
  before: Record<string, string>,
): { connectionProps: string; encryptedProperties?: string } {
  const mine = new Set(kind.fields.map((f) => f.key));
  const filled = (p: Field['part']): Array<[string, string]> =>
    kind.fields.filter((f) => f.part === p && (values[f.key] ?? '').trim() !== '').map((f) => [f.key, values[f.key]!.trim()]);
  const kept = Object.entries(before).filter(([k]) => !mine.has(k) && !(k === 'database' && mine.has('db')));
  const connectionProps = props([...filled('connection'), ...kept]);
  const secret = props(filled('secret'));
  return secret ? { connectionProps, encryptedProperties: secret } : { connectionProps };
}
