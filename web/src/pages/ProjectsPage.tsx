// Projects: limits, usage and usage over time per project; creating projects and API keys,
// and revoking keys.
import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { describeError } from '../api/client.ts';
import { CreateApiKeyMutation, CreateProjectMutation, ProjectsQuery, RevokeApiKeyMutation, type ApiKeyInfo, type ProjectInfo } from '../api/queries.ts';
import { UsageChart } from '../components/UsageChart.tsx';
import { Card, CopyButton, Empty, ErrorBox, Loading, PageHeader, UsageBar, bytes, duration, minutes } from '../components/ui.tsx';

type Range = { granularity: 'HOUR' | 'DAY'; buckets: number; label: string };
const RANGES: Range[] = [
  { granularity: 'HOUR', buckets: 24, label: '24 hours' },
  { granularity: 'DAY', buckets: 30, label: '30 days' },
];

export function ProjectsPage() {
  const [range, setRange] = useState<Range>(RANGES[0]!);
  const [res, refetch] = useQuery({ query: ProjectsQuery, variables: { granularity: range.granularity, buckets: range.buckets } });
  const [creating, setCreating] = useState(false);
  const [newKey, setNewKey] = useState<{ key: string; projectIds: string[] } | null>(null);
  const [, createKey] = useMutation(CreateApiKeyMutation);
  const [, revokeKey] = useMutation(RevokeApiKeyMutation);
  const [error, setError] = useState('');

  const onCreateKey = async (projectId: string) => {
    setError('');
    const r = await createKey({ projectIds: [projectId] });
    if (r.error || !r.data) return setError(describeError(r.error));
    setNewKey(r.data.createApiKey);
    refetch({ requestPolicy: 'network-only' });
  };
  const onRevoke = async (k: ApiKeyInfo) => {
    if (!confirm(`Revoke the key ${k.prefix}…? Programs using it stop working at once.`)) return;
    const r = await revokeKey({ id: k.id });
    if (r.error) setError(describeError(r.error));
    refetch({ requestPolicy: 'network-only' });
  };

  const data = res.data;
  return (
    <>
      <PageHeader
        title="Projects"
        subtitle="Concurrency, usage and API keys."
        actions={
          <>
            <div className="segmented" role="group" aria-label="Usage range">
              {RANGES.map((r) => (
                <button key={r.label} type="button" className={r === range ? 'active' : ''} aria-pressed={r === range} onClick={() => setRange(r)}>{r.label}</button>
              ))}
            </div>
            <button type="button" className="btn btn-primary" onClick={() => setCreating(true)}>New project</button>
          </>
        }
      />
      {creating && <NewProject onDone={() => { setCreating(false); refetch({ requestPolicy: 'network-only' }); }} />}
      {newKey && (
        <div className="notice" role="status">
          <strong>New API key for {newKey.projectIds.join(', ')}</strong>
          <p>Copy it now: it is shown this once. Send it as the <code>x-svc-api-key</code> header.</p>
          <div className="secret"><code className="mono" data-testid="new-key">{newKey.key}</code><CopyButton text={newKey.key} /></div>
          <button type="button" className="btn btn-small" onClick={() => setNewKey(null)}>Done</button>
        </div>
      )}
      {error && <ErrorBox title="That did not work" message={error} />}
      {res.error && !data ? (
        <ErrorBox title="Projects could not be loaded" message={describeError(res.error)} onRetry={() => refetch({ requestPolicy: 'network-only' })} />
      ) : !data ? (
        <Loading what="projects" />
      ) : data.projects.length === 0 ? (
        <Empty title="No projects yet">Create one to issue API keys. Sessions always belong to a project.</Empty>
      ) : (
        <div className="project-grid">
          {data.projects.map((p) => (
            <ProjectCard key={p.id} p={p} range={range} keys={data.apiKeys.filter((k) => k.projectIds.includes(p.id))} onCreateKey={() => void onCreateKey(p.id)} onRevoke={(k) => void onRevoke(k)} />
          ))}
        </div>
      )}
    </>
  );
}

function ProjectCard({ p, range, keys, onCreateKey, onRevoke }: { p: ProjectInfo; range: Range; keys: ApiKeyInfo[]; onCreateKey: () => void; onRevoke: (k: ApiKeyInfo) => void }) {
  const live = keys.filter((k) => !k.revokedAt);
  return (
    <Card title={<>{p.name} <span className="muted mono small">{p.id}</span></>} className="project">
      <div className="project-stats">
        <div>
          <div className="stat-label">Concurrency</div>
          <div className="stat-value">{p.runningSessions} / {p.concurrency}</div>
          <UsageBar used={p.runningSessions} total={p.concurrency} label={`${p.runningSessions} of ${p.concurrency} sessions`} />
        </div>
        <div>
          <div className="stat-label">Browser time</div>
          <div className="stat-value">{minutes(p.usage.browserMinutes)}</div>
        </div>
        <div>
          <div className="stat-label">Proxied</div>
          <div className="stat-value">{bytes(p.usage.proxyBytes)}</div>
        </div>
        <div>
          <div className="stat-label">Default timeout</div>
          <div className="stat-value">{duration(p.defaultTimeout * 1000)}</div>
        </div>
      </div>
      <UsageChart points={p.usageSeries} granularity={range.granularity} label={`Usage of ${p.name}, last ${range.label}`} />
      <div className="keys">
        <div className="keys-head">
          <h3 className="sub">API keys</h3>
          <button type="button" className="btn btn-small" onClick={onCreateKey}>New key</button>
        </div>
        {live.length === 0 ? (
          <p className="muted">No active key. Create one to call the API for this project.</p>
        ) : (
          <ul className="key-list">
            {live.map((k) => (
              <li key={k.id}>
                <code className="mono">{k.prefix}…</code>
                <span className="muted">created {new Date(k.createdAt).toLocaleDateString()}</span>
                <button type="button" className="btn btn-small btn-danger-ghost" onClick={() => onRevoke(k)}>Revoke</button>
              </li>
            ))}
          </ul>
        )}
      </div>
    </Card>
  );
}

function NewProject({ onDone }: { onDone: () => void }) {
  const [, create] = useMutation(CreateProjectMutation);
  const [name, setName] = useState('');
  const [concurrency, setConcurrency] = useState('25');
  const [timeout, setTimeoutValue] = useState('3600');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    const r = await create({ name, concurrency: Number(concurrency), defaultTimeout: Number(timeout) });
    setBusy(false);
    if (r.error) return setError(describeError(r.error));
    onDone();
  };
  return (
    <Card title="New project">
      <form className="inline-form" onSubmit={(e) => void submit(e)}>
        <label className="field grow"><span>Name</span><input required value={name} onChange={(e) => setName(e.target.value)} placeholder="crawler" autoFocus /></label>
        <label className="field"><span>Concurrency</span><input type="number" min={1} max={10000} value={concurrency} onChange={(e) => setConcurrency(e.target.value)} /></label>
        <label className="field"><span>Default timeout (s)</span><input type="number" min={60} max={86400} value={timeout} onChange={(e) => setTimeoutValue(e.target.value)} /></label>
        <div className="form-actions">
          <button type="button" className="btn" onClick={onDone}>Cancel</button>
          <button type="submit" className="btn btn-primary" disabled={busy || !name.trim()}>{busy ? 'Creating…' : 'Create project'}</button>
        </div>
      </form>
      {error && <p className="text-bad">{error}</p>}
    </Card>
  );
}
