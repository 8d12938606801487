// The Public HTTPS metrics card (companion-runtime spec): the entrypoint's state and URL host.
import type { PublicHttpsInfo } from '../api/queries.ts';
import { Metric, StatusBadge } from './ui.tsx';

const explain: Record<PublicHttpsInfo['status'], string> = {
  disabled: 'Off. Set PUBLIC_HTTPS_ENABLED=true to expose share links publicly.',
  idle: 'Enabled; not started yet.',
  starting: 'Starting the tunnel…',
  ready: 'Share links and frame ingest are reachable from the internet.',
  error: 'The tunnel failed.',
  stopped: 'Stopped.',
};

export function PublicHttpsCard({ state }: { state: PublicHttpsInfo | undefined }) {
  if (!state) return <Metric label="Public HTTPS" value={<span className="muted">—</span>} testId="public-https" />;
  return (
    <Metric
      label="Public HTTPS"
      testId="public-https"
      value={
        <span className="metric-inline">
          <StatusBadge status={state.status} />
          <span className="mono host" data-testid="public-https-host">{state.host || (state.enabled ? 'no URL yet' : 'not exposed')}</span>
        </span>
      }
      detail={state.status === 'error' && state.lastError ? <span className="text-bad">{state.lastError}</span> : explain[state.status]}
    />
  );
}
