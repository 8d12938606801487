// What a node agent is told over its command subscription, as envelopes: `release` when one
// of its sessions ends (whoever ended it, on whichever replica: the session change stream is
// shared), `drain` when an operator drains it. The node row is polled for the drain, which is
// rare and may be set by any replica.
import type { Envelope } from '../../schema/envelope.ts';
import { commandEnvelope } from '../../schema/node.ts';
import type { Deps } from '../deps.ts';
import type { SessionChange } from '../events/bus.ts';

export function watchNodeCommands(
  deps: Pick<Deps, 'db' | 'bus' | 'log'>,
  nodeId: string,
  send: (e: Envelope) => void,
  pollMs = 2_000,
): () => void {
  let stopped = false;
  const unsubscribe = deps.bus.subscribe((c: SessionChange) => {
    if (c.to !== 'STOPPED' && c.to !== 'FAILED') return;
    void deps.db.session.findUnique({ where: { id: c.sessionId }, select: { nodeId: true } }).then((row) => {
      if (!stopped && row?.nodeId === nodeId) {
        send(commandEnvelope(nodeId, { command: 'release', sessionId: c.sessionId }, `session ${c.sessionId} ended (${c.reason ?? c.to})`));
      }
    }, (err: unknown) => deps.log.warn({ err, nodeId }, 'could not route a session change to its node'));
  });
  let draining = false;
  const check = async () => {
    const node = await deps.db.node.findUnique({ where: { id: nodeId }, select: { status: true } });
    const now = node?.status === 'DRAINING';
    if (now && !draining && !stopped) send(commandEnvelope(nodeId, { command: 'drain' }, `node ${nodeId} is draining: it takes no new sessions`));
    draining = now;
  };
  void check().catch(() => undefined);
  const timer = setInterval(() => void check().catch(() => undefined), pollMs);
  timer.unref();
  return () => {
    stopped = true;
    unsubscribe();
    clearInterval(timer);
  };
}
