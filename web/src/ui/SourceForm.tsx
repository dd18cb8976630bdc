/**
 * The forms that connect a source: adding one (a form per kind, Test connection first) and
 * editing one's connection (PATCH /rest/api/source/{name}). A connection that fails is said
 * plainly (lib/source-errors.ts): what failed, the field to look at (marked invalid), and what
 * the source said.
 */
import { useState } from 'preact/hooks';
import type { Api } from '../lib/api.js';
import { KINDS, alteration, missingFields, parseProps, sourceSpec, type Kind } from '../lib/props.js';
import { sourceProblem, type SourceProblem } from '../lib/source-errors.js';
import { ErrorBox } from './common.js';

function ProblemBox({ problem }: { problem: SourceProblem }) {
  return (
    <div class="error" role="alert" data-testid="source-problem">
      <strong class="error-title">{problem.title}</strong>
      <p class="error-description">{problem.description}</p>
      <p class="error-hint">Hint: {problem.hint}</p>
      <p class="muted small">
        The source said: <code>{problem.said}</code>
      </p>
    </div>
  );
}

/** A failure: said plainly when it is about reaching the source, else as the API wrote it. */
function Failure({ error, problem }: { error: unknown; problem: SourceProblem | null }) {
  return problem ? <ProblemBox problem={problem} /> : <ErrorBox error={error} />;
}

interface FieldsProps {
  kind: Kind;
  values: Record<string, string>;
  onChange: (values: Record<string, string>) => void;
  /** The field the last failure points at. */
  invalid: string | null;
  /** Which fields: all, or only the connection and its secret (an edit). */
  connectionOnly?: boolean;
  /** Placeholder of the password field. */
  secretPlaceholder?: string;
}

function Fields({ kind, values, onChange, invalid, connectionOnly, secretPlaceholder }: FieldsProps) {
  return (
    <>
      {kind.fields
        .filter((f) => !connectionOnly || f.part !== 'model')
        .map((f) => (
          <label key={`${kind.template}-${f.key}`} class={invalid === f.key ? 'invalid' : undefined}>
            {f.label}
            {f.required ? ' *' : ''}
            {f.type === 'password' ? (
              <input
                name={f.key}
                type="password"
                placeholder={secretPlaceholder}
                value={values[f.key] ?? ''}
                autocomplete="new-password"
                aria-invalid={invalid === f.key ? true : undefined}
                onInput={(e) => onChange({ ...values, [f.key]: e.currentTarget.value })}
              />
            ) : (
              <input
                name={f.key}
                inputMode={f.numeric ? 'numeric' : undefined}
                placeholder={f.placeholder}
                value={values[f.key] ?? ''}
                autocomplete="off"
                aria-invalid={invalid === f.key ? true : undefined}
                onInput={(e) => onChange({ ...values, [f.key]: e.currentTarget.value })}
              />
            )}
          </label>
        ))}
    </>
  );
}

/** Runs a form's action with busy state, and keeps its failure with its plain account. */
function useAttempt(values: Record<string, string>, name: string) {
  const [error, setError] = useState<unknown>(null);
  const [problem, setProblem] = useState<SourceProblem | null>(null);
  const [busy, setBusy] = useState(false);
  const attempt = async (work: () => Promise<void>, probe?: string) => {
    setError(null);
    setProblem(null);
    setBusy(true);
    try {
      await work();
    } catch (err) {
      setError(err);
      setProblem(sourceProblem(err, values, name, probe));
    } finally {
      setBusy(false);
    }
  };
  return { error, problem, busy, attempt };
}

/** The add-source form. "Test connection" adds the source under a throw-away name and removes it again. */
export function AddSource({ api, onAdded }: { api: Api; onAdded: (name: string) => void }) {
  const [name, setName] = useState('');
  const [template, setTemplate] = useState(KINDS[0]!.template);
  const [values, setValues] = useState<Record<string, string>>({});
  const [description, setDescription] = useState('');
  const [status, setStatus] = useState<string | null>(null);
  const kind = KINDS.find((k) => k.template === template)!;
  const { error, problem, busy, attempt } = useAttempt(values, name);

  const check = () => {
    const missing = missingFields(kind, values);
    if (missing.length > 0) throw new Error(`Fill in: ${missing.join(', ')}.`);
  };
  const test = () => {
    setStatus(null);
    // The API has no dry run: adding connects and imports, so a test adds under a name of its own and removes it.
    const probe = `console_test_${Math.random().toString(36).slice(2, 10)}`;
    return attempt(async () => {
      check();
      const added = await api.addSource(sourceSpec(probe, kind, values));
      await api.removeSource(probe);
      setStatus(`Connection works: ${added.tables.length} table(s) found.`);
    }, probe);
  };
  const save = (event: Event) => {
    event.preventDefault();
    setStatus(null);
    return attempt(async () => {
      check();
      const added = await api.addSource(sourceSpec(name, kind, values, description));
      onAdded(added.name);
    });
  };
  return (
    <form class="card add-source" onSubmit={save} aria-label="Add a data source">
      <div class="form-grid">
        <label>
          Name
          <input
            name="source-name"
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
            required
            pattern="[A-Za-z_][A-Za-z0-9_$]{0,62}"
          />
        </label>
        <label>
          Kind
          <select name="source-kind" value={template} onChange={(e) => setTemplate(e.currentTarget.value)}>
            {KINDS.map((k) => (
              <option key={k.template} value={k.template}>
                {k.label}
              </option>
            ))}
          </select>
        </label>
        <Fields kind={kind} values={values} onChange={setValues} invalid={problem?.field ?? null} />
        <label class="wide">
          Description
          <input name="description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
      </div>
      <div class="toolbar">
        <button type="button" onClick={test} disabled={busy} data-testid="test-connection">
          {busy ? 'Connecting…' : 'Test connection'}
        </button>
        <button type="submit" class="primary" disabled={busy} data-testid="save-source">
          Save source
        </button>
        <span role="status" class="notice-inline" data-testid="test-status">
          {status ?? ''}
        </span>
      </div>
      <Failure error={error} problem={problem} />
    </form>
  );
}

/** Editing a source's connection: its properties shown (secrets never), checked by vdb before they are kept. */
export function EditSource({
  api,
  name,
  template,
  connection,
  onSaved,
  onCancel,
}: {
  api: Api;
  name: string;
  template: string;
  /** SYSADMIN.DataSources' Connection: the non-secret properties. */
  connection: string;
  onSaved: () => void;
  onCancel: () => void;
}) {
  const kind = KINDS.find((k) => k.template === template);
  const before = parseProps(connection);
  const [values, setValues] = useState<Record<string, string>>(() => ({ ...before, db: before.db ?? before.database ?? '' }));
  const { error, problem, busy, attempt } = useAttempt(values, name);
  if (!kind) return <p class="muted">Sources of kind {template} are changed with SYSADMIN.alterDataSource.</p>;
  const save = (event: Event) => {
    event.preventDefault();
    return attempt(async () => {
      const missing = missingFields(kind, values);
      if (missing.length > 0) throw new Error(`Fill in: ${missing.join(', ')}.`);
      await api.alterSource(name, alteration(kind, values, before));
      onSaved();
    });
  };
  return (
    <form class="card add-source" onSubmit={save} aria-label={`Edit the connection of ${name}`}>
      <p class="muted small">
        vdb connects with the new settings before it keeps them; until then, and if they fail, {name} stays as it is.
      </p>
      <div class="form-grid">
        <Fields
          kind={kind}
          values={values}
          onChange={setValues}
          invalid={problem?.field ?? null}
          connectionOnly
          secretPlaceholder="unchanged"
        />
      </div>
      <div class="toolbar">
        <button type="submit" class="primary" disabled={busy} data-testid="save-connection">
          {busy ? 'Connecting…' : 'Save connection'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
      <Failure error={error} problem={problem} />
    </form>
  );
}
