// The nomad scheduler: places a session on a Caravan node (placement.ts, under a database lock),
// dispatches the browser-session job pinned to that node's Nomad client with the session's
// meta, and follows Nomad (event stream, reconciled with blocking queries after each
// reconnect) so that a failed, lost or vanished allocation ends its session in ERROR.
import type { Logger } from 'pino';
import { LIVE_STATUSES, type EndReason } from '../../../schema/states.ts';
import type { Db } from '../../db/client.ts';
import type { Clock } from '../../deps.ts';
import { Unavailable } from '../../errors.ts';
import { place, type NodeSnapshot } from '../placement.ts';
import type { LaunchSpec, Placement, Scheduler } from '../types.ts';
import { AllocationStub, NomadError, type AllocMetric, type NomadClient } from './client.ts';
import { pinnedJob, type DispatchMeta } from './job.ts';
import { NodeStatus } from '../../../schema/node.ts';

export interface NomadSchedulerOptions {
  client: NomadClient;
  db: Db;
  log: Logger;
  clock: Clock;
  /** The base browser-session job (registered when Nomad does not have it). */
  job: Record<string, unknown>;
  /** Overrides the control URL launchers get (CARAVAN_CONTROL_URL). */
  controlUrl?: string;
  /** Nodes whose last heartbeat is older than this are not placed on. */
  heartbeatTimeoutMs: number;
  /** Ends a session whose allocation failed, was lost, or whose job vanished. */
  onLost(sessionId: string, reason: EndReason, message: string): Promise<void>;
  /** Pause between event-stream reconnects; default 1 s. */
  retryMs?: number;
}

export interface NomadScheduler extends Scheduler {
  /** Makes sure Nomad has the base job. */
  prepare(): Promise<void>;
  /** Starts following allocations (event stream + reconciliation). */
  follow(): void;
}

export const TASK_REF_PREFIX = 'nomad:';
const short = (id: string) => id.slice(0, 8);

export function nomadScheduler(opts: NomadSchedulerOptions): NomadScheduler {
  const { client, db, log } = opts;
  const baseId = String(opts.job.ID);
  const closing = new AbortController();
  /** Dispatched job ID -> session, for sessions this process started. */
  const tracked = new Map<string, string>();
  /** Pinned variants registered by this process (node id -> Nomad node id). */
  const pinned = new Map<string, Promise<string>>();
  let prepared: Promise<Record<string, unknown>> | undefined;
  let following: Promise<void> | undefined;

  function prepare(): Promise<Record<string, unknown>> {
    prepared ??= (async () => {
      const existing = await client.getJob(baseId);
      if (existing) {
        if (!existing.ParameterizedJob) throw new Error(`Nomad job ${baseId} exists but is not parameterized: it cannot be dispatched (fix or remove it, or set NOMAD_JOB_ID)`);
        return existing as Record<string, unknown>;
      }
      const r = await client.registerJob(opts.job);
      log.info({ job: baseId, jobModifyIndex: r.JobModifyIndex, warnings: r.Warnings || undefined }, 'registered the browser-session job with Nomad');
      return (await client.getJob(baseId)) ?? opts.job;
    })().catch((err: unknown) => {
      prepared = undefined;
      throw err;
    });
    return prepared;
  }

  /** The job to dispatch for a node: its pinned variant when the agent runs under Nomad. */
  function jobFor(node: { id: string; nomadNodeId: string | null }): Promise<string> {
    if (!node.nomadNodeId) return prepare().then(() => baseId);
    const key = `${node.id}\u0000${node.nomadNodeId}`;
    let p = pinned.get(key);
    if (!p) {
      const nomadNodeId = node.nomadNodeId;
      p = prepare().then(async (base) => {
        const job = pinnedJob(base, node.id, nomadNodeId);
        await client.registerJob(job);
        log.info({ job: job.ID, nodeId: node.id, nomadNodeId }, 'registered the browser-session job pinned to a node');
        return String(job.ID);
      });
      p.catch(() => pinned.delete(key));
      pinned.set(key, p);
    }
    return p;
  }

  /** Chooses the node and records it on the session in one locked transaction, so that
   *  concurrent creates see each other's choice. */
  async function reserve(sessionId: string) {
    return db.$transaction(async (tx) => {
      await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(hashtext('caravan-placement'))`);
      const fresh = new Date(opts.clock.now() - opts.heartbeatTimeoutMs);
      const nodes = await tx.node.findMany({ where: { heartbeatAt: { not: null } } });
      const counts = await tx.session.groupBy({
        by: ['nodeId'],
        where: { nodeId: { in: nodes.map((n) => n.id) }, status: { in: LIVE_STATUSES }, id: { not: sessionId } },
        _count: { _all: true },
      });
      const running = new Map(counts.map((c) => [c.nodeId, c._count._all]));
      const snapshot: NodeSnapshot[] = nodes.map((n) => ({
        id: n.id,
        // A node past its heartbeat window is as good as down, even before the reaper says so.
        status: n.heartbeatAt && n.heartbeatAt < fresh ? 'DOWN' : NodeStatus.catch('DOWN').parse(n.status),
        capacity: n.capacity,
        running: running.get(n.id) ?? 0,
      }));
      const choice = place(snapshot);
      if (!choice.ok) throw new Unavailable(choice.reason);
      await tx.session.update({ where: { id: sessionId }, data: { nodeId: choice.nodeId } });
      return nodes.find((n) => n.id === choice.nodeId)!;
    }, { maxWait: 15_000, timeout: 15_000 });
  }

  async function lose(sessionId: string, dispatchedId: string, reason: EndReason, message: string) {
    tracked.delete(dispatchedId);
    log.warn({ sessionId, job: dispatchedId, reason, message }, 'browser allocation ended the session');
    await opts.onLost(sessionId, reason, message).catch((err) => log.warn({ err, sessionId }, 'could not end the session'));
    // Stop it here too: the session may have ended before its task reference was stored.
    await client.stopJob(dispatchedId, { purge: true }).catch(() => undefined);
  }

  /** Follows the dispatch's evaluation: a job Nomad cannot place fails at once, not after the ready wait. */
  async function watchEvaluation(sessionId: string, dispatchedId: string, evalId: string) {
    let index = 0;
    for (let round = 0; round < 20 && !closing.signal.aborted; round++) {
      const { index: next, value } = await client.evaluation(evalId, { index, wait: '10s', signal: closing.signal });
      if (value.Status === 'pending' || value.Status === '') {
        index = next;
        continue;
      }
      const failed = Object.entries(value.FailedTGAllocs ?? {});
      if (failed.length > 0) {
        const why = failed.map(([group, m]) => `${group}: ${describeMetric(m)}`).join('; ');
        await lose(sessionId, dispatchedId, 'FAILED', `Nomad could not place the browser job ${dispatchedId}: ${why}`);
      } else if (value.Status === 'failed' || value.Status === 'canceled') {
        await lose(sessionId, dispatchedId, 'FAILED', `Nomad's evaluation of the browser job ${dispatchedId} ${value.Status}: ${value.StatusDescription ?? 'no reason given'}`);
      }
      return;
    }
  }

  async function sessionOf(jobId: string): Promise<string | undefined> {
    const known = tracked.get(jobId);
    if (known) return known;
    const row = await db.session.findFirst({ where: { taskRef: TASK_REF_PREFIX + jobId, status: { in: LIVE_STATUSES } }, select: { id: true } });
    return row?.id;
  }

  async function onAllocation(alloc: AllocationStub) {
    if (!alloc.JobID.startsWith(baseId) || !['failed', 'lost', 'complete'].includes(alloc.ClientStatus)) return;
    const sessionId = await sessionOf(alloc.JobID);
    if (!sessionId) return;
    const where = alloc.NodeName ?? short(alloc.NodeID);
    if (alloc.ClientStatus === 'lost') {
      await lose(sessionId, alloc.JobID, 'NODE_DOWN', `Nomad lost the browser's allocation ${short(alloc.ID)}: its node ${where} is down or disconnected${alloc.ClientDescription ? ` (${alloc.ClientDescription})` : ''}`);
    } else if (alloc.ClientStatus === 'failed') {
      await lose(sessionId, alloc.JobID, 'FAILED', `the browser's Nomad allocation ${short(alloc.ID)} failed on ${where}: ${describeTasks(alloc)}`);
    } else if (alloc.DesiredStatus === 'run') {
      // Exited 0 without being asked: a launcher reports STOPPED before it exits, so a live
      // session here means the report never arrived.
      await lose(sessionId, alloc.JobID, 'BROWSER_EXITED', `the browser launcher exited on ${where} without reporting (${describeTasks(alloc)})`);
    } else {
      tracked.delete(alloc.JobID);
    }
  }

  /** After (re)connecting: what happened to live sessions' allocations while we were away. */
  async function reconcile() {
    const live = await db.session.findMany({
      where: { status: { in: LIVE_STATUSES }, taskRef: { startsWith: TASK_REF_PREFIX + baseId } },
      select: { id: true, taskRef: true },
    });
    for (const s of live) {
      const jobId = s.taskRef!.slice(TASK_REF_PREFIX.length);
      if (!jobId.startsWith(`${baseId}/`) && !jobId.startsWith(`${baseId}-`)) continue;
      const job = await client.getJob(jobId);
      if (!job) {
        await lose(s.id, jobId, 'FAILED', `the browser's Nomad job ${jobId} no longer exists`);
        continue;
      }
      const { value: allocs } = await client.jobAllocations(jobId);
      for (const a of allocs) await onAllocation(a);
    }
  }

  async function followLoop() {
    let index = 0;
    while (!closing.signal.aborted) {
      try {
        await reconcile();
        for await (const batch of client.events({ topics: ['Allocation'], index, signal: closing.signal })) {
          index = Math.max(index, batch.Index);
          for (const ev of batch.Events) {
            const alloc = AllocationStub.safeParse(ev.Payload?.Allocation);
            if (alloc.success) await onAllocation(alloc.data).catch((err) => log.warn({ err }, 'handling an allocation event failed'));
          }
        }
        if (!closing.signal.aborted) log.warn('the Nomad event stream ended; reconnecting');
      } catch (err) {
        if (closing.signal.aborted) break;
        log.warn({ err: err instanceof Error ? err.message : String(err) }, 'following Nomad allocations failed; retrying');
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, opts.retryMs ?? 1000);
        closing.signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
      });
    }
  }

  return {
    prepare: async () => {
      await prepare();
    },

    follow() {
      following ??= followLoop();
    },

    async start(spec: LaunchSpec): Promise<Placement> {
      const node = await reserve(spec.sessionId);
      const jobId = await jobFor(node);
      const meta: DispatchMeta = {
        session_id: spec.sessionId,
        launcher_token: spec.launcherToken,
        keep_alive: String(spec.keepAlive),
        control_url: opts.controlUrl ?? spec.controlUrl,
        node_id: node.id,
        ...(node.controlPort ? { agent_port: String(node.controlPort) } : {}),
        ...(spec.viewport ? { viewport: `${spec.viewport.width}x${spec.viewport.height}` } : {}),
        ...(spec.context?.getUrl ? { context_get_url: spec.context.getUrl } : {}),
        ...(spec.context?.putUrl ? { context_put_url: spec.context.putUrl } : {}),
        ...(spec.context ? { context_max_bytes: String(spec.context.maxBytes) } : {}),
      };
      let dispatched;
      try {
        dispatched = await client.dispatch(jobId, meta);
      } catch (err) {
        if (err instanceof NomadError && err.status === 0) throw new Unavailable(`the browser could not be scheduled: ${err.message}`);
        throw err;
      }
      const id = dispatched.DispatchedJobID;
      tracked.set(id, spec.sessionId);
      log.info({ sessionId: spec.sessionId, nodeId: node.id, job: id }, 'browser job dispatched');
      if (dispatched.EvalID) {
        void watchEvaluation(spec.sessionId, id, dispatched.EvalID).catch((err) => {
          if (!closing.signal.aborted) log.warn({ err, sessionId: spec.sessionId }, 'could not follow the evaluation');
        });
      }
      return { taskRef: TASK_REF_PREFIX + id, nodeId: node.id };
    },

    async stop(taskRef: string) {
      if (!taskRef.startsWith(TASK_REF_PREFIX)) return;
      const id = taskRef.slice(TASK_REF_PREFIX.length);
      tracked.delete(id);
      try {
        await client.stopJob(id, { purge: true });
      } catch (err) {
        if (err instanceof NomadError && err.status === 404) return;
        throw err;
      }
    },

    async close() {
      // Browsers keep running: under Nomad they outlive a control-plane restart.
      closing.abort();
      await following;
    },
  };
}

function describeMetric(m: AllocMetric): string {
  const parts: string[] = [];
  if (m.NodesEvaluated !== undefined) parts.push(`${m.NodesEvaluated} node(s) evaluated`);
  for (const [c, n] of Object.entries(m.ConstraintFiltered ?? {})) parts.push(`constraint ${c} filtered ${n}`);
  for (const [c, n] of Object.entries(m.ClassFiltered ?? {})) parts.push(`class ${c} filtered ${n}`);
  for (const [d, n] of Object.entries(m.DimensionExhausted ?? {})) parts.push(`${d} exhausted on ${n}`);
  if (!m.NodesEvaluated && Object.keys(m.NodesAvailable ?? {}).length === 0) parts.push('no client node in the job\'s datacenters');
  return parts.join(', ') || 'no reason given';
}

/** The most telling task event: a driver failure, the exit, or the last message. */
function describeTasks(alloc: AllocationStub): string {
  const parts: string[] = [];
  for (const [name, state] of Object.entries(alloc.TaskStates ?? {})) {
    const events = state.Events ?? [];
    const telling = [...events].reverse().find((e) => e.DriverError || e.Type === 'Driver Failure' || e.Type === 'Terminated' || e.Type === 'Killed' || e.Type === 'Setup Failure')
      ?? events.at(-1);
    if (!telling) continue;
    const text = telling.DriverError || telling.DisplayMessage || telling.Message || telling.Type;
    const exit = telling.Type === 'Terminated' && telling.DisplayMessage === undefined ? ` (exit code ${telling.ExitCode ?? '?'}${telling.Signal ? `, signal ${telling.Signal}` : ''})` : '';
    parts.push(`task ${name}: ${telling.Type}: ${text}${exit}`);
  }
  return parts.join('; ') || alloc.ClientDescription || 'no task events';
}
