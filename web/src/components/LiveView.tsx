// The live view of a running session: a share link made through GraphQL (the runtime's
// screencast share), whose frames are read straight from /share/:token/frames and drawn as
// they come. The share is stopped when the view goes away.
import { useEffect, useRef, useState } from 'react';
import { useMutation } from 'urql';
import { describeError } from '../api/client.ts';
import { CreateShareLinkMutation } from '../api/queries.ts';
import { CopyButton } from './ui.tsx';

type State =
  | { kind: 'starting' }
  | { kind: 'waiting'; token: string; url: string; publicUrl: string | null; expiresAt: string }
  | { kind: 'live'; token: string; url: string; publicUrl: string | null; expiresAt: string }
  | { kind: 'ended'; reason: string }
  | { kind: 'failed'; message: string };

export function LiveView({ sessionId, live }: { sessionId: string; live: boolean }) {
  const [, createShare] = useMutation(CreateShareLinkMutation);
  const [state, setState] = useState<State>({ kind: 'starting' });
  const [attempt, setAttempt] = useState(0);
  const img = useRef<HTMLImageElement>(null);
  const frames = useRef(0);

  useEffect(() => {
    if (!live) return;
    let cancelled = false;
    let source: EventSource | undefined;
    let token: string | undefined;
    setState({ kind: 'starting' });
    void createShare({ sessionId, ttlMinutes: 10 }).then((res) => {
      if (cancelled) {
        if (res.data) void stopShare(res.data.createShareLink.token);
        return;
      }
      if (res.error || !res.data) {
        setState({ kind: 'failed', message: describeError(res.error) || 'The live view could not start.' });
        return;
      }
      const share = res.data.createShareLink;
      token = share.token;
      setState({ kind: 'waiting', ...share });
      source = new EventSource(`/share/${share.token}/frames`);
      source.addEventListener('frame', (e) => {
        frames.current += 1;
        if (img.current) {
          img.current.src = `data:image/jpeg;base64,${(e as MessageEvent<string>).data}`;
          img.current.dataset.frames = String(frames.current);
        }
        if (frames.current === 1) setState({ kind: 'live', ...share });
      });
      source.addEventListener('end', (e) => {
        const reason = (JSON.parse((e as MessageEvent<string>).data) as { reason?: string }).reason ?? 'ended';
        setState({ kind: 'ended', reason });
        source?.close();
      });
    });
    return () => {
      cancelled = true;
      source?.close();
      if (token) void stopShare(token);
    };
  }, [sessionId, live, attempt, createShare]);

  if (!live) {
    return <div className="live-placeholder">The session has ended: there is no browser to watch.</div>;
  }
  const share = state.kind === 'waiting' || state.kind === 'live' ? state : undefined;
  return (
    <div className="live-view" data-state={state.kind}>
      <div className="live-screen">
        <img ref={img} alt="Live view of the session's browser" data-testid="live-frame" className={state.kind === 'live' ? '' : 'hidden'} />
        {state.kind === 'starting' && <div className="live-overlay"><span className="spinner" /> Starting the live view…</div>}
        {state.kind === 'waiting' && <div className="live-overlay"><span className="spinner" /> Waiting for the first frame…</div>}
        {state.kind === 'ended' && (
          <div className="live-overlay">
            Live view ended ({state.reason}).{' '}
            <button type="button" className="btn btn-small" onClick={() => setAttempt((a) => a + 1)}>Restart</button>
          </div>
        )}
        {state.kind === 'failed' && (
          <div className="live-overlay error">
            {state.message}{' '}
            <button type="button" className="btn btn-small" onClick={() => setAttempt((a) => a + 1)}>Retry</button>
          </div>
        )}
      </div>
      {share && (
        <div className="live-meta">
          <span className={`live-dot ${state.kind === 'live' ? 'on' : ''}`} aria-hidden="true" />
          <span>{state.kind === 'live' ? 'Live' : 'Connecting'} · share link valid until {new Date(share.expiresAt).toLocaleTimeString()}</span>
          <CopyButton text={share.publicUrl ?? `${location.origin}${share.url}`} label="Copy share link" />
        </div>
      )}
    </div>
  );
}

function stopShare(token: string): Promise<unknown> {
  return fetch(`/api/voice/share-session/${token}/stop`, { method: 'POST', keepalive: true }).catch(() => undefined);
}
