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
