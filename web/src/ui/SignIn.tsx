/** Sign in with username and password (POST /api/login); the token lives in sessionStorage. */
import { useState } from 'preact/hooks';
import type { Api, Session } from '../lib/api.js';
import { ErrorBox } from './common.js';

export function SignIn({ api, notice, onSignedIn }: { api: Api; notice: string | null; onSignedIn: (s: Session) => void }) {
  const [username, setUsername] = useState(() => new URLSearchParams(location.search).get('user') ?? '');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await api.login(username, password));
    } catch (err) {
      setError(err);
      setPassword('');
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="center">
      <form class="card signin" onSubmit={submit} aria-labelledby="signin-title">
        <h1 id="signin-title">Sign in to vdb</h1>
        {notice && (
          <p class="notice" role="status">
            {notice}
          </p>
        )}
        <label>
          Username
          <input
            name="username"
            autocomplete="username"
            value={username}
            onInput={(e) => setUsername(e.currentTarget.value)}
            required
            autoFocus
          />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            autocomplete="current-password"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
            required
          />
        </label>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <ErrorBox error={error} />
        <p class="muted small">
          Users who sign in through an external identity provider cannot use vdb's REST interface, and so not this console either: ask an
          administrator for a password user or an invitation.
        </p>
      </form>
    </main>
  );
}
