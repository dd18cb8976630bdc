/**
 * Administration (admin role only): users (add, invite with a link, remove), roles and who has
 * them, permissions with row conditions and masks, and the audit log. Everything goes through
 * the SYSADMIN procedures and system tables on the query endpoint.
 */
import { useState } from 'preact/hooks';
import type { Api, Result } from '../lib/api.js';
import { consoleSql } from '../lib/catalog.js';
import { callProcedure, sqlLiteral } from '../lib/sql.js';
import { CopyButton, DataTable, ErrorBox, onTablistKey, useLoad } from './common.js';

const PANES = ['Users', 'Roles', 'Permissions', 'Audit log'] as const;
type Pane = (typeof PANES)[number];

/** Runs an admin statement, then reloads; errors and a success message for the pane. */
function useAction(after: () => void) {
  const [error, setError] = useState<unknown>(null);
  const [message, setMessage] = useState<string | null>(null);
  const run = async (what: () => Promise<string | null>) => {
    setError(null);
    setMessage(null);
    try {
      setMessage(await what());
      after();
    } catch (err) {
      setError(err);
    }
  };
  const feedback = (
    <>
      <ErrorBox error={error} />
      {message && (
        <p class="notice" role="status">
          {message}
        </p>
      )}
    </>
  );
  return { run, feedback };
}

const paneId = (pane: Pane, part: 'tab' | 'panel') => `admin-${part}-${pane.replace(/\W/g, '-').toLowerCase()}`;

export function Admin({ api, user }: { api: Api; user: string }) {
  const [pane, setPane] = useState<Pane>('Users');
  return (
    <div class="admin">
      <h1>Administration</h1>
      <div class="tabs" role="tablist" aria-label="Administration" onKeyDown={onTablistKey}>
        {PANES.map((p) => (
          <button
            type="button"
            role="tab"
            key={p}
            id={paneId(p, 'tab')}
            aria-selected={pane === p}
            aria-controls={paneId(p, 'panel')}
            tabIndex={pane === p ? 0 : -1}
            onClick={() => setPane(p)}
            class="tab-button"
          >
            {p}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={paneId(pane, 'panel')} aria-labelledby={paneId(pane, 'tab')}>
        {pane === 'Users' && <Users api={api} user={user} />}
        {pane === 'Roles' && <Roles api={api} />}
        {pane === 'Permissions' && <Permissions api={api} />}
        {pane === 'Audit log' && <Audit api={api} />}
      </div>
    </div>
  );
}

function Users({ api, user }: { api: Api; user: string }) {
  const users = useLoad(
    () =>
      api.query(
        consoleSql(
          'SELECT "Name", "Kind", "Provider", "DatabaseUsername", "Rest", "Roles", "CreatedAt" FROM SYSADMIN.Users ORDER BY "Name"',
        ),
      ),
    [api],
  );
  const { run, feedback } = useAction(users.reload);
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [inviteName, setInviteName] = useState('');
  const [invite, setInvite] = useState<{ name: string; link: string; expires: string } | null>(null);

  const add = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await api.query(callProcedure('addUser', name, password));
      setName('');
      setPassword('');
      return `User ${name} added. Give them a role under Roles.`;
    });
  };
  const sendInvite = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const result = await api.query(callProcedure('inviteUser', inviteName));
      const [invited, token, expires] = result.rows[0] ?? [];
      // The token goes in the hash: browsers do not send it to the server, so no log sees it.
      const link = new URL(`./#/invite/${encodeURIComponent(String(token))}`, api.base).toString();
      setInvite({ name: String(invited), link, expires: String(expires) });
      setInviteName('');
      return null;
    });
  };
  const remove = (name: string) => {
    if (!confirm(`Remove the user "${name}"? Their API keys and results go too.`)) return;
    void run(async () => {
      await api.query(callProcedure('removeUser', name));
      return `User ${name} removed.`;
    });
  };

  return (
    <section aria-label="Users">
      <div class="row wrap forms">
        <form class="card" onSubmit={add} aria-label="Add a user">
          <h2>Add a user</h2>
          <label>
            Name
            <input value={name} onInput={(e) => setName(e.currentTarget.value)} required data-testid="new-user-name" />
          </label>
          <label>
            Password
            <input
              type="password"
              autocomplete="new-password"
              minLength={8}
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
              required
            />
          </label>
          <button type="submit" class="primary">
            Add user
          </button>
        </form>
        <form class="card" onSubmit={sendInvite} aria-label="Invite a user">
          <h2>Invite a user</h2>
          <p class="muted small">The invited person opens the link and chooses a password. It works once, for 7 days.</p>
          <label>
            Name
            <input value={inviteName} onInput={(e) => setInviteName(e.currentTarget.value)} required data-testid="invite-name" />
          </label>
          <button type="submit" class="primary" data-testid="invite">
            Invite
          </button>
        </form>
      </div>
      {feedback}
      {invite && (
        <div class="once" role="status" data-testid="invite-result">
          <p>
            <strong>Invitation for {invite.name}</strong>, valid until {invite.expires}. Send them this link; it is shown only now.
          </p>
          <span class="row">
            <input readOnly value={invite.link} class="mono" aria-label="Invitation link" data-testid="invite-link" />
            <CopyButton text={invite.link} label="Copy link" />
          </span>
        </div>
      )}
      <ErrorBox error={users.error} />
      <button type="button" onClick={users.reload} data-testid="reload-users">
        Reload
      </button>
      {users.value && (
        <DataTable
          result={users.value}
          caption="Users"
          actions={(row) =>
            row[0] !== user && (
              <button type="button" class="danger" onClick={() => remove(String(row[0]))} aria-label={`Remove user ${String(row[0])}`}>
                Remove
              </button>
            )
          }
        />
      )}
    </section>
  );
}

function Roles({ api }: { api: Api }) {
  const roles = useLoad(() => api.query(consoleSql('SELECT "Name", "Users" FROM SYSADMIN.Roles ORDER BY "Name"')), [api]);
  const { run, feedback } = useAction(roles.reload);
  const [role, setRole] = useState('');
  const [grantRole, setGrantRole] = useState('');
  const [grantUser, setGrantUser] = useState('');
  const names = (roles.value?.rows ?? []).map((r) => String(r[0]));
  return (
    <section aria-label="Roles">
      <div class="row wrap forms">
        <form
          class="card"
          aria-label="Add a role"
          onSubmit={(e) => {
            e.preventDefault();
            void run(async () => {
              await api.query(callProcedure('addRole', role));
              setRole('');
              return `Role ${role} added. Grant it permissions under Permissions.`;
            });
          }}
        >
          <h2>Add a role</h2>
          <label>
            Name
            <input value={role} onInput={(e) => setRole(e.currentTarget.value)} required />
          </label>
          <button type="submit" class="primary">
            Add role
          </button>
        </form>
        <form class="card" aria-label="Give or take a role" onSubmit={(e) => e.preventDefault()}>
          <h2>Give a role to a user</h2>
          <label>
            Role
            <select value={grantRole} onChange={(e) => setGrantRole(e.currentTarget.value)} required>
              <option value="">Choose…</option>
              {names.map((n) => (
                <option key={n}>{n}</option>
              ))}
            </select>
          </label>
          <label>
            User
            <input value={grantUser} onInput={(e) => setGrantUser(e.currentTarget.value)} required />
          </label>
          <span class="row">
            <button
              type="button"
              class="primary"
              onClick={() =>
                run(async () => (await api.query(callProcedure('addUserRole', grantRole, grantUser)), `${grantUser} has ${grantRole} now.`))
              }
            >
              Give
            </button>
            <button
              type="button"
              onClick={() =>
                run(
                  async () => (
                    await api.query(callProcedure('removeUserRole', grantRole, grantUser)),
                    `${grantUser} no longer has ${grantRole}.`
                  ),
                )
              }
            >
              Take away
            </button>
          </span>
        </form>
      </div>
      {feedback}
      <ErrorBox error={roles.error} />
      {roles.value && (
        <DataTable
          result={roles.value}
          caption="Roles"
          actions={(row) =>
            row[0] !== 'admin' && (
              <button
                type="button"
                class="danger"
                aria-label={`Remove role ${String(row[0])}`}
                onClick={() =>
                  confirm(`Remove the role "${String(row[0])}" and its permissions?`) &&
                  run(async () => (await api.query(callProcedure('removeRole', String(row[0]))), `Role ${String(row[0])} removed.`))
                }
              >
                Remove
              </button>
            )
          }
        />
      )}
    </section>
  );
}

function Permissions({ api }: { api: Api }) {
  const perms = useLoad(
    () =>
      api.query(
        consoleSql(
          'SELECT "RoleName", "ResourceName", "Permissions", "Condition", "Mask", "MaskOrder" FROM SYSADMIN.Permissions ORDER BY 1, 2',
        ),
      ),
    [api],
  );
  const { run, feedback } = useAction(perms.reload);
  const [form, setForm] = useState({ role: '', resource: '', letters: 'R', condition: '', mask: '', maskOrder: '' });
  const field = (key: keyof typeof form) => ({
    value: form[key],
    onInput: (e: Event) => setForm({ ...form, [key]: (e.currentTarget as HTMLInputElement).value }),
  });
  const set = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      if (form.maskOrder && !/^-?\d+$/.test(form.maskOrder)) throw new Error('The mask order must be an integer.');
      const args = [
        `role => ${sqlLiteral(form.role)}`,
        `resourceName => ${sqlLiteral(form.resource)}`,
        `permissions => ${sqlLiteral(form.letters)}`,
        ...(form.condition ? [`condition => ${sqlLiteral(form.condition)}`] : []),
        ...(form.mask ? [`mask => ${sqlLiteral(form.mask)}`] : []),
        ...(form.maskOrder ? [`maskOrder => ${form.maskOrder}`] : []),
      ];
      await api.query(`CALL SYSADMIN.setPermissions(${args.join(', ')})`);
      return `Permissions of ${form.role} on ${form.resource} set.`;
    });
  };
  const remove = (role: string, resource: string) =>
    run(async () => {
      await api.query(
        `CALL SYSADMIN.setPermissions(role => ${sqlLiteral(role)}, resourceName => ${sqlLiteral(resource)}, permissions => NULL)`,
      );
      return `Entry of ${role} on ${resource} removed.`;
    });
  return (
    <section aria-label="Permissions">
      <form class="card" onSubmit={set} aria-label="Set permissions">
        <h2>Set permissions</h2>
        <p class="muted small">
          Letters of CRUDEA (create, read, update, delete, execute, alter) on <code>*</code>, a schema, <code>schema.table</code> or{' '}
          <code>schema.table.column</code>. A row condition limits a table's rows (<code>country = 'DE'</code>,{' '}
          <code>owner = CURRENT_USER</code>); a mask replaces a column's value (<code>'***'</code>). Setting an entry replaces it whole.
        </p>
        <div class="form-grid">
          <label>
            Role
            <input {...field('role')} required />
          </label>
          <label>
            Resource
            <input {...field('resource')} required placeholder="shop.customers" />
          </label>
          <label>
            Letters
            <input {...field('letters')} placeholder="R" />
          </label>
          <label>
            Row condition
            <input {...field('condition')} placeholder="country = 'DE'" />
          </label>
          <label>
            Mask (columns)
            <input {...field('mask')} placeholder="'***'" />
          </label>
          <label>
            Mask order
            <input {...field('maskOrder')} inputMode="numeric" />
          </label>
        </div>
        <button type="submit" class="primary">
          Set
        </button>
      </form>
      {feedback}
      <ErrorBox error={perms.error} />
      {perms.value && (
        <DataTable
          result={perms.value}
          caption="Permission entries"
          actions={(row) => (
            <button
              type="button"
              class="danger"
              onClick={() => remove(String(row[0]), String(row[1]))}
              aria-label={`Remove entry ${String(row[0])} ${String(row[1])}`}
            >
              Remove
            </button>
          )}
        />
      )}
    </section>
  );
}

function Audit({ api }: { api: Api }) {
  const log = useLoad<Result>(
    () =>
      api.query(
        consoleSql(
          'SELECT "ID", "Time", "UserName", "Action", "Target", "Outcome", "Address" FROM SYSLOG.AuditLog ORDER BY "ID" DESC LIMIT 500',
        ),
      ),
    [api],
  );
  return (
    <section aria-label="Audit log">
      <button type="button" onClick={log.reload}>
        Reload
      </button>
      <ErrorBox error={log.error} />
      {log.value && <DataTable result={log.value} caption="Audit log, newest first" />}
    </section>
  );
}
