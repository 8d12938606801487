// The dashboard shell: top bar with navigation and the live-connection state, the pages, and
// the login screen whenever the server asks for one.
import { useMemo, useState } from 'react';
import { Provider } from 'urql';
import { Link, Route, Switch, useLocation } from 'wouter';
import { createApi, type LiveState } from './api/client.ts';
import { StatusBadge } from './components/ui.tsx';
import { LoginPage, Logo } from './pages/LoginPage.tsx';
import { NodesPage } from './pages/NodesPage.tsx';
import { ProjectsPage } from './pages/ProjectsPage.tsx';
import { SessionPage } from './pages/SessionPage.tsx';
import { SessionsPage } from './pages/SessionsPage.tsx';
import { SettingsPage } from './pages/SettingsPage.tsx';

const NAV = [
  { href: '/', label: 'Sessions', match: (p: string) => p === '/' || p.startsWith('/session/') },
  { href: '/projects', label: 'Projects', match: (p: string) => p === '/projects' },
  { href: '/nodes', label: 'Nodes', match: (p: string) => p === '/nodes' },
  { href: '/settings', label: 'Settings', match: (p: string) => p === '/settings' },
];

export function App() {
  const [live, setLive] = useState<LiveState>('connecting');
  const [needsLogin, setNeedsLogin] = useState(false);
  const [generation, setGeneration] = useState(0);
  // A new client after a login: its socket connects with the new cookie.
  const api = useMemo(() => createApi({ onLive: setLive, onUnauthorized: () => setNeedsLogin(true) }), [generation]);
  const [location, navigate] = useLocation();

  if (needsLogin || location === '/login') {
    return (
      <LoginPage
        expired={needsLogin}
        onLoggedIn={() => {
          void api.ws.dispose();
          setNeedsLogin(false);
          setGeneration((g) => g + 1);
          if (location === '/login') navigate('/');
        }}
      />
    );
  }

  return (
    <Provider value={api.client} key={generation}>
      <div className="shell">
        <header className="topbar">
          <Link href="/" className="brand" aria-label="Caravan"><Logo /> <span className="brand-name">Caravan</span></Link>
          <nav className="nav" aria-label="Main">
            {NAV.map((n) => (
              <Link key={n.href} href={n.href} className={n.match(location) ? 'active' : ''} aria-current={n.match(location) ? 'page' : undefined}>{n.label}</Link>
            ))}
          </nav>
          <span className="live-state" data-testid="live-state" title={live === 'live' ? 'Updates arrive as they happen' : 'Reconnecting to the live updates'}>
            <StatusBadge status={live} />
          </span>
        </header>
        <main className="content">
          <Switch>
            <Route path="/"><SessionsPage /></Route>
            <Route path="/session/:id">{(params) => <SessionPage id={decodeURIComponent(params.id)} />}</Route>
            <Route path="/projects"><ProjectsPage /></Route>
            <Route path="/nodes"><NodesPage /></Route>
            <Route path="/settings"><SettingsPage /></Route>
            <Route>
              <div className="empty"><strong>Nothing here</strong><div className="empty-body"><Link href="/">Go to sessions</Link></div></div>
            </Route>
          </Switch>
        </main>
      </div>
    </Provider>
  );
}
