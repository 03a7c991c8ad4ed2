import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { currentSession, SESSION_ENDED, signOut, type Session } from './api.js';
import { parseRoute, useRoute } from './route.js';
import { SignInPage } from './pages/sign-in-page.js';
import { QueuesPage } from './pages/queues-page.js';
import { QueuePage } from './pages/queue-page.js';
import { PullRequestPage } from './pages/pull-request-page.js';
import { HealthPage } from './pages/health-page.js';
import { SettingsPage } from './pages/settings-page.js';
import './styles.css';

function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const hash = useRoute();
  useEffect(() => {
    currentSession().then(setSession, () => setSession(null));
    // Any call answered 401 (the session expired or was signed out elsewhere): back to signing in.
    const ended = () => setSession(null);
    addEventListener(SESSION_ENDED, ended);
    return () => removeEventListener(SESSION_ENDED, ended);
  }, []);
  if (session === undefined) return <p class="loading">Loading…</p>;
  if (session === null) return <SignInPage onSignedIn={setSession} />;
  const route = parseRoute(hash);
  return (
    <>
      <header class="top">
        <a href="#/" class="brand">
          Merge queue
        </a>
        <span class="org">
          {session.organization.owner} on {session.organization.host}
        </span>
        <button type="button" class="link" onClick={() => void signOut().then(() => setSession(null))}>
          Sign out
        </button>
      </header>
      <main>
        {route.page === 'queues' && <QueuesPage session={session} />}
        {/* Keyed by the route: another queue or PR is a new page, never the last one's data under a new heading. */}
        {route.page === 'queue' && <QueuePage key={hash} queue={route.queue} />}
        {route.page === 'pr' && <PullRequestPage key={hash} queue={route.queue} number={route.number} />}
        {route.page === 'health' && <HealthPage key={hash} queue={route.queue} />}
        {route.page === 'settings' && <SettingsPage key={hash} queue={route.queue} />}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
