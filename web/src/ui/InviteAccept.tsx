/** Accepting an invitation (#/invite/<token>): the invited person chooses a password (POST /api/invite/accept). */
import { useState } from 'preact/hooks';
import type { Api } from '../lib/api.js';
import { ErrorBox } from './common.js';

export function InviteAccept({ api, token }: { api: Api; token: string }) {
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    if (password !== repeat) {
      setError(new Error('The two passwords differ.'));
      return;
    }
    try {
      setDone((await api.acceptInvite(token, password)).username);
    } catch (err) {
      setError(err);
    }
  };
  if (done) {
    return (
      <main class="center">
        <div class="card" role="status">
          <h1>Welcome, {done}</h1>
          <p>Your user is ready. Sign in with your new password.</p>
          <a class="button primary" href={`./?user=${encodeURIComponent(done)}#/query`} data-testid="to-signin">
            Sign in
          </a>
        </div>
      </main>
    );
  }
  return (
    <main class="center">
      <form class="card signin" onSubmit={submit} aria-labelledby="invite-title">
        <h1 id="invite-title">Accept your invitation</h1>
        <p class="muted">Choose a password of at least 8 characters. The invitation works once.</p>
        <label>
          Password
          <input
            type="password"
            name="new-password"
            autocomplete="new-password"
            minLength={8}
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
            required
            autoFocus
          />
        </label>
        <label>
          Repeat password
          <input
            type="password"
            name="repeat-password"
            autocomplete="new-password"
            value={repeat}
            onInput={(e) => setRepeat(e.currentTarget.value)}
            required
          />
        </label>
        <button type="submit" class="primary">
          Create my user
        </button>
        <ErrorBox error={error} />
      </form>
    </main>
  );
}
