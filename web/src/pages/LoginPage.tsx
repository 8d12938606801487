// The dashboard login: the DASHBOARD_TOKEN, exchanged once for an HttpOnly session cookie by
// POST /api/auth/session (the token itself is never stored in the browser).
import { useState, type FormEvent } from 'react';

export function LoginPage({ onLoggedIn, expired }: { onLoggedIn: () => void; expired: boolean }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      const res = await fetch('/api/auth/session', { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
      if (res.ok) return onLoggedIn();
      const body = (await res.json().catch(() => ({}))) as { message?: string };
      setError(res.status === 401 ? 'That is not the dashboard token. Check DASHBOARD_TOKEN in the server\'s environment.' : body.message ?? `Login failed (HTTP ${res.status}).`);
    } catch {
      setError('The control plane did not answer. Check that it is running, then try again.');
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="login">
      <form className="login-card" onSubmit={(e) => void submit(e)}>
        <div className="brand big"><Logo /> Caravan</div>
        <h1>Log in to the dashboard</h1>
        {expired && <p className="notice-inline">Your session has ended. Log in again to continue where you were.</p>}
        <label className="field">
          <span>Dashboard token</span>
          <input type="password" autoComplete="current-password" required autoFocus value={token} onChange={(e) => setToken(e.target.value)} placeholder="DASHBOARD_TOKEN" />
        </label>
        {error && <p className="text-bad" role="alert">{error}</p>}
        <button type="submit" className="btn btn-primary wide" disabled={busy || !token}>{busy ? 'Logging in…' : 'Log in'}</button>
        <p className="muted small">The login works on this machine only. The token is exchanged for a session cookie valid for 12 hours; it is not stored in the browser.</p>
      </form>
    </div>
  );
}

export function Logo() {
  return (
    <svg className="logo" viewBox="0 0 32 32" aria-hidden="true">
      <rect width="32" height="32" rx="7" fill="#163c5c" />
      <path d="M7 21h18M9 21v-6a3 3 0 0 1 3-3h8a3 3 0 0 1 3 3v6" stroke="#f4b860" strokeWidth="2.5" fill="none" strokeLinecap="round" />
    </svg>
  );
}
