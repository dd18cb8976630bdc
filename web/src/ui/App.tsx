/**
 * The console's frame: sign-in, the navigation, and the screen the location's hash names
 * (#/query, #/sources, #/history, #/preferences, #/admin, #/invite/<token>). Hash routes need no
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
import { Preferences } from './Preferences.js';
import { Admin } from './Admin.js';

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
  const [open, setOpen] = useState<OpenStatement | null>(null);
  const hash = useHash();

  const signOut = (why: string | null) => {
    clearSession();
    setSession(null);
    setAdmin(false);
    setNotice(why);
  };
  const api = useMemo(() => new Api(base(), session, () => signOut('Your sign-in expired or was revoked. Sign in again.')), [session]);

  // Administration is shown to the admin role only; the API refuses the rest anyway.
  useEffect(() => {
    if (!session) return;
    // An answer for an earlier sign-in (signed out and in as someone else meanwhile) is dropped.
    let live = true;
    api
      .query(consoleSql(`SELECT "Roles" FROM SYSADMIN.Users WHERE "Name" = CURRENT_USER`))
      .then((r) =>
        setAdmin(
          live &&
            String(r.rows[0]?.[0] ?? '')
              .split(',')
              .includes('admin'),
        ),
      )
      .catch(() => live && setAdmin(false));
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
        <nav aria-label="Screens">
          {SCREENS.filter((s) => !('admin' in s) || admin).map((s) => (
            <a key={s.path} href={`#/${s.path}`} aria-current={s === screen ? 'page' : undefined}>
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
        {screen.path === 'query' && <QueryScreen api={api} user={session.username} open={open} onOpened={() => setOpen(null)} />}
        {screen.path === 'sources' && <Sources api={api} openInEditor={openInEditor} />}
        {screen.path === 'history' && <History api={api} openInEditor={openInEditor} />}
        {screen.path === 'preferences' && <Preferences api={api} />}
        {screen.path === 'admin' && admin && <Admin api={api} user={session.username} />}
      </main>
    </div>
  );
}
