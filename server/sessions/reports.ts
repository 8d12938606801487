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
  const session = await deps.db.session.findUnique({ where: { id: report.sessionId } });
  if (!session) throw new NotFound(`session ${report.sessionId} not found`);
  switch (report.status) {
    case 'READY': {
      const nodeId = report.nodeId ?? session.nodeId;
      if (!nodeId || !report.browser) throw new Invalid('a READY report needs nodeId and browser');
      const node = await deps.db.node.findUnique({ where: { id: nodeId } });
      if (!node) throw new NotFound(`node ${nodeId} not found`);
      const urls = signCdpUrl(node, session.signingKey);
      const row = await transition(deps, session.id, 'READY', {
        reason: 'BROWSER_READY',
        patch: {
          nodeId,
          publicIp: node.publicHost,
          connectUrl: urls.connectUrl,
          seleniumRemoteUrl: urls.seleniumRemoteUrl,
          debug: {
            browserPort: report.browser.port, wsPath: report.browser.wsPath, version: report.browser.version ?? null,
            pid: report.browser.pid ?? null, userDataDir: report.browser.userDataDir ?? null,
          },
        },
      });
      return row !== null;
    }
    case 'STOPPED':
      // The launcher reports STOPPED after its profile save (if any): the context is free.
      await releaseContextLock(deps, session.id);
      return endSession(deps, session.id, 'STOPPED', 'BROWSER_EXITED', report.message);
    case 'FAILED':
      await releaseContextLock(deps, session.id);
      return endSession(deps, session.id, 'FAILED', 'BROWSER_EXITED', report.message ?? 'the browser exited');
  }
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
