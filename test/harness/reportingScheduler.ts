// A stand-in scheduler for control-plane tests: instead of starting Chromium it reports READY
// over GraphQL with the session's launcher credential, exactly as agent/launcher does.
import type { Deps } from '../../server/deps.ts';
import type { LaunchSpec, Placement, Scheduler } from '../../server/scheduler/types.ts';
import { controlPlaneClient } from '../../agent/report.ts';

export interface ReportingScheduler extends Scheduler {
  started: LaunchSpec[];
  stopped: string[];
}

export function reportingScheduler(opts: {
  deps: Omit<Deps, 'scheduler'>;
  nodeId?: string;
  /** Report to this control plane instead of the one that placed the session. */
  reportTo?: () => string;
  /** Do not report at all (tests of the ready wait). */
  silent?: boolean;
}): ReportingScheduler {
  const nodeId = opts.nodeId ?? 'fake-node';
  const started: LaunchSpec[] = [];
  const stopped: string[] = [];
  const ensureNode = opts.deps.db.node.upsert({
    where: { id: nodeId },
    create: { id: nodeId, name: nodeId, publicHost: '127.0.0.1', cdpPort: 9, capacity: 1000, status: 'UP' },
    update: {},
  });
  return {
    started,
    stopped,
    async start(spec): Promise<Placement> {
      await ensureNode;
      started.push(spec);
      if (!opts.silent) {
        const client = controlPlaneClient(opts.reportTo?.() ?? spec.controlUrl, spec.launcherToken);
        setImmediate(() => {
          void client.reportSession({ sessionId: spec.sessionId, status: 'READY', nodeId, browser: { port: 9, wsPath: '/devtools/browser/fake' } });
        });
      }
      return { taskRef: `fake:${spec.sessionId}`, nodeId };
    },
    async stop(taskRef) {
      stopped.push(taskRef);
    },
    async close() {},
  };
}
