// One session: its facts, the timeline of its change events, its metadata, and a live view of
// its browser while it runs. Changes arrive over the session change stream.
import { useEffect, useState } from 'react';
import { useMutation, useQuery, useSubscription } from 'urql';
import { Link } from 'wouter';
import { describeError } from '../api/client.ts';
import { ReleaseSessionMutation, SessionEventsSubscription, SessionQuery, type SessionDetail } from '../api/queries.ts';
import { LiveView } from '../components/LiveView.tsx';
import { Card, CopyButton, Empty, ErrorBox, Loading, PageHeader, StatusBadge, ago, duration, useNow } from '../components/ui.tsx';

export function SessionPage({ id }: { id: string }) {
  const now = useNow();
  const [res, refetch] = useQuery({ query: SessionQuery, variables: { id } });
  useSubscription({ query: SessionEventsSubscription, variables: { sessionId: id } }, (_p, data) => {
    refetch({ requestPolicy: 'network-only' });
    return data;
  });
  const [releaseState, release] = useMutation(ReleaseSessionMutation);
  const [releaseError, setReleaseError] = useState('');
  useEffect(() => setReleaseError(''), [id]);

  const s = res.data?.session;
  if (res.error && !s) return <ErrorBox title="This session could not be loaded" message={describeError(res.error)} onRetry={() => refetch({ requestPolicy: 'network-only' })} />;
  if (!res.data) return <Loading what="the session" />;
  if (!s) {
    return (
      <Empty title="No such session">
        It may have been removed after its retention period. <Link href="/">Back to sessions</Link>
      </Empty>
    );
  }
  const onRelease = async () => {
    const r = await release({ id });
    if (r.error) setReleaseError(describeError(r.error));
    refetch({ requestPolicy: 'network-only' });
  };
  const end = s.endedAt ? Date.parse(s.endedAt) : now;

  return (
    <>
      <nav className="crumbs"><Link href="/">Sessions</Link> <span aria-hidden="true">/</span> <span className="mono">{s.id}</span></nav>
      <PageHeader
        title={<span className="title-with-badge"><span className="mono break">{s.id}</span> <StatusBadge status={s.status} title={s.internalStatus} /></span>}
        subtitle={<>Project <strong>{s.project.name}</strong> · started {ago(s.createdAt, now)} · {s.live ? 'running for' : 'ran for'} {duration(end - Date.parse(s.createdAt))}</>}
        actions={s.live && (
          <button type="button" className="btn btn-danger" disabled={releaseState.fetching} onClick={() => void onRelease()} data-testid="release-session">
            {releaseState.fetching ? 'Releasing…' : 'Release session'}
          </button>
        )}
      />
      {releaseError && <ErrorBox title="Release failed" message={releaseError} />}
      {s.errorMessage && <ErrorBox title={`Ended with ${s.endReason ?? 'an error'}`} message={s.errorMessage} />}

      <div className="session-grid">
        <Card title="Live view" className="span-2">
          <LiveView sessionId={s.id} live={s.live} />
        </Card>
        <Card title="Timeline">
          <Timeline s={s} />
        </Card>
        <Card title="Details">
          <dl className="facts">
            <dt>Status</dt><dd>{s.status.toLowerCase()} <span className="muted">({s.internalStatus}{s.endReason ? `, ${s.endReason}` : ''})</span></dd>
            <dt>Project</dt><dd>{s.project.name} <span className="muted mono">{s.project.id}</span></dd>
            <dt>Node</dt><dd className="mono">{s.node ? `${s.node.id} (${s.node.publicHost})` : '—'}</dd>
            <dt>Region</dt><dd>{s.region}</dd>
            <dt>Keep alive</dt><dd>{s.keepAlive ? 'yes' : 'no'}</dd>
            <dt>Timeout</dt><dd>{duration(s.timeout * 1000)} <span className="muted">(expires {new Date(s.expiresAt).toLocaleString()})</span></dd>
            <dt>Context</dt><dd className="mono">{s.contextId ?? '—'}</dd>
            <dt>Created</dt><dd>{new Date(s.createdAt).toLocaleString()}</dd>
            <dt>Ended</dt><dd>{s.endedAt ? new Date(s.endedAt).toLocaleString() : '—'}</dd>
          </dl>
        </Card>
        <Card title="Metadata" actions={<CopyButton text={JSON.stringify(s.userMetadata, null, 2)} label="Copy JSON" />}>
          {Object.keys(s.userMetadata ?? {}).length === 0 ? <p className="muted">No userMetadata was given when this session was created.</p> : <pre className="json">{JSON.stringify(s.userMetadata, null, 2)}</pre>}
          <h3 className="sub">Browser settings</h3>
          {Object.keys(s.browserSettings ?? {}).length === 0 ? <p className="muted">Defaults.</p> : <pre className="json">{JSON.stringify(s.browserSettings, null, 2)}</pre>}
        </Card>
      </div>
    </>
  );
}

function Timeline({ s }: { s: SessionDetail }) {
  if (s.events.length === 0) return <p className="muted">No events recorded.</p>;
  const t0 = Date.parse(s.events[0]!.at);
  return (
    <ol className="timeline" data-testid="timeline">
      {s.events.map((e) => (
        <li key={e.seq} className={`tl-${e.to.toLowerCase()}`}>
          <span className="tl-dot" aria-hidden="true" />
          <div className="tl-body">
            <div className="tl-title">
              <strong>{e.to}</strong>
              {e.from && <span className="muted"> from {e.from}</span>}
              {e.reason && <span className="chip">{e.reason}</span>}
            </div>
            <div className="tl-time muted" title={new Date(e.at).toLocaleString()}>
              {new Date(e.at).toLocaleTimeString()} · +{((Date.parse(e.at) - t0) / 1000).toFixed(2)} s
            </div>
          </div>
        </li>
      ))}
    </ol>
  );
}
