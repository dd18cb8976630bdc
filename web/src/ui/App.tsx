/**
 * The console's frame: sign-in, the navigation, and the screen the location's hash names
 * (#/query, #/sources, #/copies, #/history, #/preferences, #/admin, #/invite/<token>). Hash routes need no
 * server routes, and an invitation token in the hash never reaches a server log.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { Api, type Session } from '../lib/api.js';
import { loadSession, saveSession, clearSession } from '../lib/session.js';
import { consoleSql } from '../lib/catalog.js';
import { SignIn } from './SignIn.js';
import { InviteAccept } from './InviteAccept.js';
import { QueryScreen } from './QueryScreen.js';
import { Sources } from './Sources.js';
import { History } from './History.js';
import { Copies } from './Copies.js';
import { Preferences } from './Preferences.js';
import { Admin } from './Admin.js';
import { Workbench } from '../lib/workbench.js';
import { NO_GRANTS, type Grants } from '../lib/permissions.js';

const base = () => new URL('./', location.href).toString();

function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    addEventListener('hashchange', on);
    // The hash may have changed between the first render and this effect (a link opened at once).
    on();
    return () => removeEventListener('hashchange', on);
  }, []);
  return hash;
}

const SCREENS = [
  { path: 'query', label: 'SQL' },
  { path: 'sources', label: 'Sources' },
  { path: 'copies', label: 'Copies' },
  { path: 'history', label: 'History' },
  { path: 'preferences', label: 'Preferences' },
  { path: 'admin', label: 'Administration', admin: true },
] as const;

/** A statement handed from another screen (history, sources) to the editor. */
export interface OpenStatement {
  sql: string;
  run: boolean;
  seq: number;
}

export function App() {
  const [session, setSession] = useState<Session | null>(loadSession);
  const [notice, setNotice] = useState<string | null>(null);
  const [admin, setAdmin] = useState(false);
  const [grants, setGrants] = useState<Grants>(NO_GRANTS);
  const [open, setOpen] = useState<OpenStatement | null>(null);
  /** The screens' menu on a phone (the navigation is folded away below 760 px). */
  const [menu, setMenu] = useState(false);
  const hash = useHash();

  const signOut = (why: string | null) => {
    workbench?.close();
    clearSession();
    setSession(null);
    setAdmin(false);
    setGrants(NO_GRANTS);
    setNotice(why);
  };
  const api = useMemo(() => new Api(base(), session, () => signOut('Your sign-in expired or was revoked. Sign in again.')), [session]);
  // The statements and results of the editor's tabs, kept while the user moves between screens.
  const workbench = useMemo(
    () => (session ? new Workbench(api, sessionStorage, `vdb.console.runs.${session.username}`) : null),
    [api, session],
  );
  // Leaving or reloading the page closes a running statement's connection: the browser asks first.
  useEffect(() => {
    const warn = (e: BeforeUnloadEvent) => {
      if (workbench?.running()) e.preventDefault();
    };
    addEventListener('beforeunload', warn);
    return () => removeEventListener('beforeunload', warn);
  }, [workbench]);

  // Administration is shown to the admin role only, and changes are offered where the user's
  // permissions allow them; the API refuses the rest anyway.
  useEffect(() => {
    if (!session) return;
    // An answer for an earlier sign-in (signed out and in as someone else meanwhile) is dropped.
    let live = true;
    Promise.all([
      api.query(consoleSql(`SELECT "Roles" FROM SYSADMIN.Users WHERE "Name" = CURRENT_USER`)),
      api.query(consoleSql(`SELECT "RoleName", "ResourceName", "Permissions" FROM SYSADMIN.Permissions`)),
    ])
      .then(([user, permissions]) => {
        if (!live) return;
        const isAdmin = String(user.rows[0]?.[0] ?? '')
          .split(',')
          .includes('admin');
        setAdmin(isAdmin);
        setGrants({
          admin: isAdmin,
          entries: permissions.rows.map(([role, resource, letters]) => ({
            role: String(role),
            resource: String(resource),
            letters: String(letters ?? ''),
          })),
        });
      })
      .catch(() => {
        if (!live) return;
        setAdmin(false);
        setGrants(NO_GRANTS);
      });
    return () => {
      live = false;
    };
  }, [api, session]);

  const invite = /^#\/invite\/([^/?]+)/.exec(hash)?.[1];
  if (invite) return <InviteAccept api={api} token={decodeURIComponent(invite)} />;
  if (!session) {
    return (
      <SignIn
        api={api}
        notice={notice}
        onSignedIn={(s) => {
          saveSession(s);
          setNotice(null);
          setSession(s);
        }}
      />
    );
  }

  const current = /^#\/(\w+)/.exec(hash)?.[1] ?? 'query';
  const screen = SCREENS.find((s) => s.path === current && (!('admin' in s) || admin)) ?? SCREENS[0];
  const openInEditor = (sql: string, run: boolean) => {
    setOpen({ sql, run, seq: Date.now() });
    location.hash = '#/query';
  };

  return (
    <div class="app">
      {/* The hash names the screen, so the link moves the focus itself instead of setting #main. */}
      <a
        class="skip"
        href="#main"
        onClick={(e) => {
          e.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="top">
        <span class="brand">vdb</span>
        <button type="button" class="menu-toggle" aria-expanded={menu} aria-controls="screens" onClick={() => setMenu(!menu)}>
          {menu ? '✕ Menu' : '☰ Menu'}
        </button>
        <nav aria-label="Screens" id="screens" class={menu ? 'open' : undefined}>
          {SCREENS.filter((s) => !('admin' in s) || admin).map((s) => (
            <a key={s.path} href={`#/${s.path}`} aria-current={s === screen ? 'page' : undefined} onClick={() => setMenu(false)}>
              {s.label}
            </a>
          ))}
        </nav>
        <span class="who">
          <span data-testid="user">{session.username}</span>
          <button type="button" onClick={() => signOut('You signed out.')}>
            Sign out
          </button>
        </span>
      </header>
      <main id="main" tabIndex={-1}>
        {screen.path === 'query' && workbench && (
          <QueryScreen api={api} user={session.username} workbench={workbench} open={open} onOpened={() => setOpen(null)} />
        )}
        {screen.path === 'sources' && <Sources api={api} grants={grants} openInEditor={openInEditor} />}
        {screen.path === 'copies' && <Copies api={api} grants={grants} />}
        {screen.path === 'history' && <History api={api} openInEditor={openInEditor} />}
        {screen.path === 'preferences' && <Preferences api={api} />}
        {screen.path === 'admin' && admin && <Admin api={api} user={session.username} />}
      </main>
    </div>
  );
}
