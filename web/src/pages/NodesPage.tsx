// Nodes: each browser node's capacity, load and health, kept current by the node stream.
import { useQuery, useSubscription } from 'urql';
import { describeError } from '../api/client.ts';
import { NodesQuery, NodesSubscription, type NodeInfo } from '../api/queries.ts';
import { Card, Empty, ErrorBox, Loading, PageHeader, StatusBadge, UsageBar, ago, useNow } from '../components/ui.tsx';

export function NodesPage() {
  const now = useNow(5000);
  const [res, refetch] = useQuery({ query: NodesQuery });
  const [live] = useSubscription({ query: NodesSubscription });
  const nodes = live.data?.nodesChanged ?? res.data?.nodes;

  return (
    <>
      <PageHeader title="Nodes" subtitle="The machines that run browsers. Placement skips nodes that are draining or down." />
      {res.error && !nodes ? (
        <ErrorBox title="Nodes could not be loaded" message={describeError(res.error)} onRetry={() => refetch({ requestPolicy: 'network-only' })} />
      ) : !nodes ? (
        <Loading what="nodes" />
      ) : nodes.length === 0 ? (
        <Empty title="No nodes have registered">
          With the local scheduler this machine is the node; with Nomad, run the <code>caravan-agent</code> system job on your clients.
        </Empty>
      ) : (
        <div className="node-grid" data-testid="nodes">
          {nodes.map((n) => <NodeCard key={n.id} n={n} now={now} />)}
        </div>
      )}
    </>
  );
}

function NodeCard({ n, now }: { n: NodeInfo; now: number }) {
  const health = n.status !== 'UP' ? n.status : n.healthy ? 'UP' : 'DOWN';
  return (
    <Card
      title={<span className="mono">{n.name}</span>}
      actions={<StatusBadge status={n.status} title={n.healthy ? 'healthy' : 'not heartbeating'} />}
      className={`node ${health === 'UP' ? '' : 'node-attention'}`}
    >
      <div className="node-load">
        <div className="stat-value">{n.running} <span className="muted">/ {n.capacity} browsers</span></div>
        <UsageBar used={n.running} total={n.capacity} label={`${n.running} of ${n.capacity} browsers`} />
        <div className="muted small">{n.free} free</div>
      </div>
      <dl className="facts compact">
        <dt>Health</dt><dd>{n.healthy ? 'healthy' : n.status === 'DRAINING' ? 'draining: finishing its sessions' : 'not reachable'}</dd>
        <dt>CDP proxy</dt><dd className="mono">{n.tls ? 'wss' : 'ws'}://{n.publicHost}:{n.cdpPort}</dd>
        <dt>WebDriver</dt><dd className="mono">{n.webdriverPort ? `${n.publicHost}:${n.webdriverPort}` : '—'}</dd>
        <dt>Heartbeat</dt><dd>{n.lastHeartbeatAt ? ago(n.lastHeartbeatAt, now) : 'in-process (local scheduler)'}</dd>
        {n.nomadNodeId && (<><dt>Nomad client</dt><dd className="mono">{n.nomadNodeId}</dd></>)}
      </dl>
    </Card>
  );
}
