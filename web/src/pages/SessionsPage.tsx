// Sessions: the overview metrics, filters, and the session list, kept current by the session
// change stream (every change refetches the page shown; no reload).
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useMutation, useQuery, useSubscription } from 'urql';
import { Link } from 'wouter';
import { describeError } from '../api/client.ts';
import { OverviewQuery, ReleaseSessionMutation, SessionEventsSubscription, SessionsQuery, type SessionStatus, type SessionSummary } from '../api/queries.ts';
import { PublicHttpsCard } from '../components/PublicHttpsCard.tsx';
import { Empty, ErrorBox, Loading, Metric, PageHeader, StatusBadge, ago, duration, shortId, useNow } from '../components/ui.tsx';

const PAGE = 25;
const STATUSES: Array<SessionStatus | ''> = ['', 'RUNNING', 'COMPLETED', 'ERROR', 'TIMED_OUT'];

export function SessionsPage() {
  const now = useNow();
  const [project, setProject] = useState('');
  const [status, setStatus] = useState<SessionStatus | ''>('');
  const [node, setNode] = useState('');
  const [search, setSearch] = useState('');
  const [metadata, setMetadata] = useState('');
  const [cursors, setCursors] = useState<Array<string | null>>([null]);

  // Typing in the search box waits for a pause before it queries.
  useEffect(() => {
    const t = setTimeout(() => setMetadata(search.trim()), 300);
    return () => clearTimeout(t);
  }, [search]);

  const filter = useMemo(() => {
    const f: Record<string, unknown> = {};
    if (project) f.projectId = project;
    if (status) f.status = status;
    if (node) f.nodeId = node;
    if (metadata) f.metadata = parseMetadata(metadata);
    return f;
  }, [project, status, node, metadata]);
  useEffect(() => setCursors([null]), [filter]);

  const after = cursors[cursors.length - 1] ?? null;
  const [list, refetchList] = useQuery({ query: SessionsQuery, variables: { filter, first: PAGE, after } });
  const [overview, refetchOverview] = useQuery({ query: OverviewQuery });

  // Each change refetches (batched: a create brings several changes within milliseconds).
  const pending = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const refresh = useCallback(() => {
    if (pending.current) return;
    pending.current = setTimeout(() => {
      pending.current = undefined;
      refetchList({ requestPolicy: 'network-only' });
      refetchOverview({ requestPolicy: 'network-only' });
    }, 120);
  }, [refetchList, refetchOverview]);
  useEffect(() => () => clearTimeout(pending.current), []);
  useSubscription({ query: SessionEventsSubscription, variables: {} }, (_prev, data) => {
    refresh();
    return data;
  });
  // Public HTTPS state has no stream: it is read again every 10 s.
  useEffect(() => {
    const t = setInterval(() => refetchOverview({ requestPolicy: 'network-only' }), 10_000);
    return () => clearInterval(t);
  }, [refetchOverview]);

  const [, release] = useMutation(ReleaseSessionMutation);
  const [releasing, setReleasing] = useState<Record<string, boolean>>({});
  const [actionError, setActionError] = useState('');
  const onRelease = async (id: string) => {
    setReleasing((r) => ({ ...r, [id]: true }));
    const res = await release({ id });
    setReleasing((r) => ({ ...r, [id]: false }));
    if (res.error) setActionError(`Could not release ${shortId(id)}: ${describeError(res.error)}`);
    refresh();
  };

  const ov = overview.data;
  const nodesUp = ov?.nodes.filter((n) => n.status === 'UP').length ?? 0;
  const capacity = ov?.nodes.filter((n) => n.status === 'UP').reduce((a, n) => a + n.capacity, 0) ?? 0;
  const sessions = list.data?.sessions;
  const filtered = Object.keys(filter).length > 0;
  const projectNames = new Map(ov?.projects.map((p) => [p.id, p.name]) ?? []);

  return (
    <>
      <PageHeader title="Sessions" subtitle="Every browser session across projects, as it happens." />
      <div className="metrics">
        <Metric label="Running sessions" testId="metric-running" value={ov ? ov.running.totalCount : '—'} detail={ov ? `of ${capacity} browser slots on ${nodesUp} node${nodesUp === 1 ? '' : 's'}` : ' '} />
        <Metric label="Nodes" value={ov ? `${nodesUp} / ${ov.nodes.length} up` : '—'} detail={ov && ov.nodes.some((n) => !n.healthy) ? <span className="text-warn">Some nodes need attention</span> : 'All healthy'} />
        <PublicHttpsCard state={ov?.publicHttps} />
      </div>

      <div className="toolbar" role="search">
        <label className="field">
          <span>Project</span>
          <select value={project} onChange={(e) => setProject(e.target.value)}>
            <option value="">All projects</option>
            {ov?.projects.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
          </select>
        </label>
        <label className="field">
          <span>Status</span>
          <select value={status} onChange={(e) => setStatus(e.target.value as SessionStatus | '')} data-testid="status-filter">
            {STATUSES.map((s) => <option key={s} value={s}>{s ? s.replace('_', ' ').toLowerCase() : 'Any status'}</option>)}
          </select>
        </label>
        <label className="field">
          <span>Node</span>
          <select value={node} onChange={(e) => setNode(e.target.value)}>
            <option value="">All nodes</option>
            {ov?.nodes.map((n) => <option key={n.id} value={n.id}>{n.id}</option>)}
          </select>
        </label>
        <label className="field grow">
          <span>Metadata</span>
          <input type="search" placeholder='text, or JSON such as {"userId":"u1"}' value={search} onChange={(e) => setSearch(e.target.value)} />
        </label>
      </div>

      {actionError && <ErrorBox title="Release failed" message={actionError} onRetry={() => setActionError('')} />}

      {list.error && !sessions ? (
        <ErrorBox title="Sessions could not be loaded" message={describeError(list.error)} onRetry={() => refetchList({ requestPolicy: 'network-only' })} />
      ) : !sessions ? (
        <Loading what="sessions" />
      ) : sessions.nodes.length === 0 ? (
        filtered ? (
          <Empty title="No session matches these filters">Clear a filter to see more.</Empty>
        ) : (
          <Empty title="No sessions yet">
            Create one with the SDK: <code>bb.sessions.create({'{'} projectId {'}'})</code> against this server. It appears here at once.
          </Empty>
        )
      ) : (
        <div className="list" data-testid="sessions">
          <div className="list-head" aria-hidden="true">
            <span>Status</span><span>Session</span><span>Project</span><span>Node</span><span>Started</span><span>Duration</span><span>Metadata</span><span />
          </div>
          {sessions.nodes.map((s) => (
            <SessionRow key={s.id} s={s} projectName={projectNames.get(s.projectId)} now={now} releasing={Boolean(releasing[s.id])} onRelease={() => void onRelease(s.id)} />
          ))}
          <div className="list-foot">
            <span className="muted">
              {sessions.totalCount} session{sessions.totalCount === 1 ? '' : 's'}
              {cursors.length > 1 ? ` · page ${cursors.length}` : ''}
            </span>
            <span className="pager">
              <button type="button" className="btn btn-small" disabled={cursors.length === 1} onClick={() => setCursors((c) => c.slice(0, -1))}>Newer</button>
              <button type="button" className="btn btn-small" disabled={!sessions.pageInfo.hasNextPage} onClick={() => setCursors((c) => [...c, sessions.pageInfo.endCursor])}>Older</button>
            </span>
          </div>
        </div>
      )}
    </>
  );
}

function SessionRow({ s, projectName, now, releasing, onRelease }: { s: SessionSummary; projectName: string | undefined; now: number; releasing: boolean; onRelease: () => void }) {
  const end = s.endedAt ? Date.parse(s.endedAt) : now;
  const meta = Object.entries(s.userMetadata ?? {});
  return (
    <div className="list-row" data-session-id={s.id} data-status={s.status}>
      <span className="cell-status"><StatusBadge status={s.status} title={s.internalStatus} /></span>
      <span className="cell-id">
        <Link href={`/session/${s.id}`} className="mono">{shortId(s.id)}</Link>
      </span>
      <span className="cell-project" data-label="Project" title={s.projectId}>{projectName ?? s.projectId}</span>
      <span className="cell-node mono" data-label="Node">{s.nodeId ?? '—'}</span>
      <span className="cell-time" data-label="Started" title={new Date(s.createdAt).toLocaleString()}>{ago(s.createdAt, now)}</span>
      <span className="cell-duration" data-label="Duration">{duration(end - Date.parse(s.createdAt))}</span>
      <span className="cell-meta" data-label="Metadata">
        {meta.length === 0 ? <span className="muted">—</span> : meta.slice(0, 3).map(([k, v]) => <span key={k} className="chip">{k}: {typeof v === 'string' ? v : JSON.stringify(v)}</span>)}
      </span>
      <span className="cell-actions">
        {s.live && (
          <button type="button" className="btn btn-small btn-danger" onClick={onRelease} disabled={releasing} data-testid="release">
            {releasing ? 'Releasing…' : 'Release'}
          </button>
        )}
      </span>
    </div>
  );
}

/** `{...}` is a metadata object to match exactly; anything else is searched as text. */
function parseMetadata(text: string): unknown {
  if (text.startsWith('{')) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}
