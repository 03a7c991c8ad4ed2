import { useState } from 'preact/hooks';
import { signIn, type Session } from '../api.js';

/** The organization's API token, checked by the server and kept in an HttpOnly cookie (never in this page's storage). */
export function SignInPage({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError('');
    try {
      onSignedIn(await signIn(token.trim()));
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="sign-in">
      <h1>Merge queue</h1>
      <form onSubmit={(e) => void submit(e)}>
        <label for="token">Organization API token</label>
        <input id="token" name="token" type="password" autocomplete="off" required value={token} onInput={(e) => setToken((e.target as HTMLInputElement).value)} />
        <p class="hint">
          Create one with <code>npm run mq -- token create --host &lt;host&gt; --owner &lt;owner&gt;</code>.
        </p>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}
