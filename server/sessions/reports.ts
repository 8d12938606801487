// What launchers and node agents report: browser ready / stopped / failed, clients attached
// or idle, bytes proxied. Each report moves the session through transition().
import { signCdpUrl } from './urls.ts';
import type { NodeSignal, SessionReport } from '../../schema/agent.ts';
import type { Deps } from '../deps.ts';
import { Invalid, NotFound } from '../errors.ts';
import { endSession } from './end.ts';
import { transition } from './transition.ts';
import { releaseContextLock } from '../contexts/attach.ts';

export async function applySessionReport(deps: Deps, report: SessionReport): Promise<boolean> {
  if (report.status === 'READY') return applyReady(deps, report);
  const session = await deps.db.session.findUnique({ where: { id: report.sessionId }, select: { id: true } });
  if (!session) throw new NotFound(`session ${report.sessionId} not found`);
  switch (report.status) {
    case 'STOPPED':
      // The launcher reports STOPPED after its profile save (if any): the context is free.
      await releaseContextLock(deps, session.id);
      return endSession(deps, session.id, 'STOPPED', 'BROWSER_EXITED', report.message);
    case 'FAILED':
      await releaseContextLock(deps, session.id);
      return endSession(deps, session.id, 'FAILED', 'BROWSER_EXITED', report.message ?? 'the browser exited');
  }
}

/** READY: the session's row and its node's address in one read, then the state change with
 *  the URLs clients connect with. */
async function applyReady(deps: Deps, report: SessionReport): Promise<boolean> {
  const [found] = await deps.db.$queryRaw<Array<{ signingKey: string; nodeId: string | null; publicHost: string | null; cdpPort: number | null; webdriverPort: number | null; tls: boolean | null }>>`
    SELECT s."signingKey", n.id AS "nodeId", n."publicHost", n."cdpPort", n."webdriverPort", n.tls
    FROM "Session" s LEFT JOIN "Node" n ON n.id = COALESCE(${report.nodeId ?? null}::text, s."nodeId")
    WHERE s.id = ${report.sessionId}`;
  if (!found) throw new NotFound(`session ${report.sessionId} not found`);
  if (!report.browser) throw new Invalid('a READY report needs browser');
  const { nodeId, publicHost, cdpPort } = found;
  if (!nodeId || publicHost === null || cdpPort === null) {
    if (!report.nodeId) throw new Invalid('a READY report needs nodeId');
    throw new NotFound(`node ${report.nodeId} not found`);
  }
  const urls = signCdpUrl({ publicHost, cdpPort, webdriverPort: found.webdriverPort, tls: found.tls ?? false }, found.signingKey);
  const b = report.browser;
  const row = await transition(deps, report.sessionId, 'READY', {
    reason: 'BROWSER_READY',
    placement: {
      nodeId, publicIp: publicHost, connectUrl: urls.connectUrl, seleniumRemoteUrl: urls.seleniumRemoteUrl,
      debug: { browserPort: b.port, wsPath: b.wsPath, version: b.version ?? null, pid: b.pid ?? null, userDataDir: b.userDataDir ?? null },
    },
  });
  return row !== null;
}

/** Signals from a node agent; sessions on other nodes are ignored. */
export async function applyNodeSignals(deps: Deps, nodeId: string, signals: NodeSignal[]): Promise<void> {
  for (const s of signals) {
    const session = await deps.db.session.findUnique({ where: { id: s.sessionId }, select: { id: true, nodeId: true, keepAlive: true, status: true } });
    if (s.kind === 'BYTES') {
      // Usage outlives the session record, so bytes count even after the record is gone.
      if (session && session.nodeId !== nodeId) continue;
      await deps.db.usage.updateMany({ where: { sessionId: s.sessionId }, data: { proxyBytes: { increment: BigInt(s.proxyBytes) } } });
      continue;
    }
    if (!session || session.nodeId !== nodeId) continue;
    if (s.kind === 'ATTACHED') await transition(deps, s.sessionId, 'RUNNING', { reason: 'ATTACHED' });
    if (s.kind === 'IDLE' && !session.keepAlive) await endSession(deps, s.sessionId, 'STOPPED', 'IDLE', 'every client disconnected and none came back within the grace period');
  }
}
