// A Nomad HTTP API double: a small Node HTTP server that follows Nomad's documented behaviour
// for the subset Caravan uses, and runs each placed task as a REAL local process.
//   - X-Nomad-Index on every answer; blocking queries with ?index=&wait=
//   - PUT /v1/jobs, GET /v1/job/:id, PUT /v1/job/:id/dispatch (ids <job>/dispatch-<unix>-<8 hex>),
//     GET /v1/job/:id/allocations, GET /v1/allocation/:id, GET /v1/evaluation/:id,
//     DELETE /v1/job/:id[?purge=true], POST /v1/allocation/:id/stop, GET /v1/nodes, GET /v1/jobs
//   - allocation ClientStatus pending -> running -> complete | failed (| lost when a node goes
//     down), TaskStates with events; evaluations pending -> complete, FailedTGAllocs when nothing fits
//   - GET /v1/event/stream (NDJSON, `{}` heartbeats), X-Nomad-Token, ?namespace=, plain-text errors
// Several client nodes are simulated on this one machine; constraints on node attributes apply.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { interpolate, killGroup, nodeVariables, startTask, type DoubleNodeInfo, type StartedTask } from './doubleTask.ts';

type Json = Record<string, unknown>;

export interface NomadDoubleOptions {
  /** Client nodes to simulate; default one node named "double-1". */
  nodes?: Array<{ name: string; id?: string; datacenter?: string; meta?: Record<string, string> }>;
  /** When set, requests must carry it (X-Nomad-Token or Authorization: Bearer). */
  token?: string;
  /** Event-stream heartbeat period; Nomad's is 30 s. */
  heartbeatMs?: number;
  /** Variables every task inherits (Nomad passes the client agent's environment to raw_exec). */
  baseEnv?: Record<string, string>;
  /** Delay before a "client" picks up a new allocation. */
  clientDelayMs?: number;
}

interface DoubleNode extends DoubleNodeInfo {
  Status: 'ready' | 'down';
  ModifyIndex: number;
}

interface Alloc {
  ID: string;
  Name: string;
  Namespace: string;
  EvalID: string;
  NodeID: string;
  NodeName: string;
  JobID: string;
  TaskGroup: string;
  DesiredStatus: 'run' | 'stop';
  DesiredDescription: string;
  ClientStatus: 'pending' | 'running' | 'complete' | 'failed' | 'lost';
  ClientDescription: string;
  TaskStates: Record<string, { State: 'pending' | 'running' | 'dead'; Failed: boolean; Restarts: number; StartedAt: string | null; FinishedAt: string | null; Events: Json[] }>;
  CreateIndex: number;
  ModifyIndex: number;
  CreateTime: number;
  ModifyTime: number;
}

interface AllocRec {
  alloc: Alloc;
  job: Json;
  dir: string;
  started?: StartedTask;
  stopping: boolean;
  killTimer?: NodeJS.Timeout;
}

interface Eval {
  ID: string;
  Namespace: string;
  JobID: string;
  Type: string;
  TriggeredBy: string;
  Status: 'pending' | 'complete' | 'blocked' | 'failed';
  StatusDescription: string;
  FailedTGAllocs: Record<string, Json> | null;
  BlockedEval: string;
  CreateIndex: number;
  ModifyIndex: number;
}

export interface NomadDouble {
  url: string;
  nodes: ReadonlyArray<{ ID: string; Name: string }>;
  /** The node goes down: its allocations are lost and their processes killed. */
  markNodeDown(id: string): void;
  /** stdout + stderr of an allocation's task (for failing tests). */
  logs(allocId: string): string;
  allocations(): Alloc[];
  close(): Promise<void>;
}

class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

const uuid = () => crypto.randomUUID();
const now = () => Date.now() * 1_000_000; // Nomad times are Unix nanoseconds

function durationMs(v: string | null, fallback: number): number {
  if (!v) return fallback;
  const m = /^(\d+(?:\.\d+)?)(ns|us|ms|s|m|h)?$/.exec(v);
  if (!m) throw new HttpError(400, `Invalid wait time: time: invalid duration "${v}"`);
  const unit = { ns: 1e-6, us: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 'ns') as 'ms'];
  return Number(m[1]) * unit;
}

export async function startNomadDouble(opts: NomadDoubleOptions = {}): Promise<NomadDouble> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'nomad-double-'));
  const heartbeatMs = opts.heartbeatMs ?? 1000;
  let index = 10;
  const nodes: DoubleNode[] = (opts.nodes ?? [{ name: 'double-1' }]).map((n) => ({
    ID: n.id ?? uuid(), Name: n.name, Datacenter: n.datacenter ?? 'dc1', Meta: n.meta ?? {}, Status: 'ready', ModifyIndex: index,
  }));
  const jobs = new Map<string, Json>(); // key: namespace \0 id
  const allocs = new Map<string, AllocRec>();
  const evals = new Map<string, Eval>();
  const eventLog: Array<{ Index: number; Events: Json[] }> = [];
  const streams = new Set<(batch: { Index: number; Events: Json[] }) => void>();
  const waiters = new Set<() => void>();
  let closed = false;

  const jobKey = (ns: string, id: string) => `${ns}\u0000${id}`;

  /** Bumps the index, records events and wakes blocking queries and streams. */
  function commit(events: Json[] = []): number {
    index += 1;
    if (events.length) {
      const batch = { Index: index, Events: events.map((e) => ({ ...e, Index: index })) };
      eventLog.push(batch);
      if (eventLog.length > 1000) eventLog.shift();
      for (const s of streams) s(batch);
    }
    for (const w of [...waiters]) w();
    return index;
  }

  const stub = (a: Alloc) => ({ ...a, TaskStates: structuredClone(a.TaskStates) });
  const allocEvent = (a: Alloc, type = 'AllocationUpdated') => ({
    Topic: 'Allocation', Type: type, Key: a.ID, Namespace: a.Namespace, FilterKeys: [a.JobID], Payload: { Allocation: stub(a) },
  });
  const evalEvent = (e: Eval) => ({ Topic: 'Evaluation', Type: 'EvaluationUpdated', Key: e.ID, Namespace: e.Namespace, FilterKeys: [e.JobID], Payload: { Evaluation: { ...e } } });
  const jobEvent = (j: Json, type: string) => ({ Topic: 'Job', Type: type, Key: j.ID, Namespace: j.Namespace, Payload: { Job: j } });

  function updateAlloc(rec: AllocRec, fn: (a: Alloc) => void) {
    fn(rec.alloc);
    rec.alloc.ModifyTime = now();
    rec.alloc.ModifyIndex = index + 1; // the index this commit gets
    commit([allocEvent(rec.alloc)]);
    const job = jobs.get(jobKey(rec.alloc.Namespace, rec.alloc.JobID));
    if (job && ['complete', 'failed', 'lost'].includes(rec.alloc.ClientStatus)) {
      const live = [...allocs.values()].some((r) => r.alloc.JobID === rec.alloc.JobID && r.alloc.Namespace === rec.alloc.Namespace && !['complete', 'failed', 'lost'].includes(r.alloc.ClientStatus));
      if (!live && job.Type === 'batch') job.Status = 'dead';
    }
  }

  function taskEvent(rec: AllocRec, type: string, extra: Json = {}) {
    for (const s of Object.values(rec.alloc.TaskStates)) s.Events.push({ Type: type, Time: now(), ...extra });
  }

  // ---- scheduling -------------------------------------------------------------------------

  function constraintsOf(job: Json, group: Json): Json[] {
    const tasks = (group.Tasks as Json[] | undefined) ?? [];
    return [job.Constraints, group.Constraints, ...tasks.map((t) => t.Constraints)].flatMap((c) => (Array.isArray(c) ? (c as Json[]) : []));
  }

  function satisfies(node: DoubleNode, c: Json): boolean {
    const vars = nodeVariables(node);
    const l = interpolate(String(c.LTarget ?? ''), vars);
    const r = interpolate(String(c.RTarget ?? ''), vars);
    switch (String(c.Operand ?? '=')) {
      case '=': case '==': case 'is': return l === r;
      case '!=': case 'not': return l !== r;
      case 'regexp': return new RegExp(r).test(l);
      case 'set_contains': return r.split(',').every((x) => l.split(',').map((s) => s.trim()).includes(x.trim()));
      default: return true;
    }
  }

  function schedule(job: Json, ns: string, triggeredBy: string): Eval {
    const ev: Eval = {
      ID: uuid(), Namespace: ns, JobID: String(job.ID), Type: String(job.Type ?? 'service'), TriggeredBy: triggeredBy,
      Status: 'pending', StatusDescription: '', FailedTGAllocs: null, BlockedEval: '', CreateIndex: 0, ModifyIndex: 0,
    };
    evals.set(ev.ID, ev);
    ev.CreateIndex = ev.ModifyIndex = index + 1;
    commit([evalEvent(ev)]);
    // The scheduler works asynchronously, as Nomad's does.
    setTimeout(() => {
      if (closed) return;
      const dcs = (job.Datacenters as string[] | undefined) ?? ['*'];
      const failed: Record<string, Json> = {};
      for (const group of (job.TaskGroups as Json[]) ?? []) {
        for (let i = 0; i < Number(group.Count ?? 1); i++) {
          const inDc = nodes.filter((n) => n.Status === 'ready' && dcs.some((d) => d === '*' || d === n.Datacenter));
          const filtered: Record<string, number> = {};
          const fits = inDc.filter((n) => {
            for (const c of constraintsOf(job, group)) {
              if (!satisfies(n, c)) {
                const name = `${String(c.LTarget)} ${String(c.Operand ?? '=')} ${String(c.RTarget)}`;
                filtered[name] = (filtered[name] ?? 0) + 1;
                return false;
              }
            }
            return true;
          });
          if (fits.length === 0) {
            failed[String(group.Name)] = {
              NodesEvaluated: inDc.length, NodesFiltered: inDc.length - fits.length, NodesExhausted: 0,
              NodesAvailable: Object.fromEntries([...new Set(nodes.map((n) => n.Datacenter))].map((d) => [d, nodes.filter((n) => n.Datacenter === d && n.Status === 'ready').length])),
              ConstraintFiltered: filtered, ClassFiltered: null, DimensionExhausted: null,
            };
            continue;
          }
          const load = (n: DoubleNode) => [...allocs.values()].filter((r) => r.alloc.NodeID === n.ID && r.alloc.ClientStatus === 'running').length;
          const node = fits.reduce((a, b) => (load(b) < load(a) ? b : a));
          place(job, ns, group, node, ev.ID, i);
        }
      }
      if (Object.keys(failed).length) {
        const blocked: Eval = { ...ev, ID: uuid(), Status: 'blocked', TriggeredBy: 'queued-allocs', FailedTGAllocs: null, StatusDescription: 'created due to placement conflicts' };
        evals.set(blocked.ID, blocked);
        ev.FailedTGAllocs = failed;
        ev.BlockedEval = blocked.ID;
      }
      ev.Status = 'complete';
      ev.ModifyIndex = index + 1;
      commit([evalEvent(ev)]);
    }, 10);
    return ev;
  }

  function place(job: Json, ns: string, group: Json, node: DoubleNode, evalId: string, i: number) {
    const task = ((group.Tasks as Json[]) ?? [])[0] ?? {};
    const a: Alloc = {
      ID: uuid(), Name: `${String(job.ID)}.${String(group.Name)}[${i}]`, Namespace: ns, EvalID: evalId, NodeID: node.ID, NodeName: node.Name,
      JobID: String(job.ID), TaskGroup: String(group.Name), DesiredStatus: 'run', DesiredDescription: '', ClientStatus: 'pending', ClientDescription: '',
      TaskStates: { [String(task.Name)]: { State: 'pending', Failed: false, Restarts: 0, StartedAt: null, FinishedAt: null, Events: [{ Type: 'Received', Time: now(), DisplayMessage: 'Task received by client' }] } },
      CreateIndex: 0, ModifyIndex: 0, CreateTime: now(), ModifyTime: now(),
    };
    const rec: AllocRec = { alloc: a, job, dir: path.join(root, a.ID), stopping: false };
    allocs.set(a.ID, rec);
    a.CreateIndex = a.ModifyIndex = index + 1;
    commit([allocEvent(a, 'PlanResult')]);
    setTimeout(() => run(rec, group, task, node), opts.clientDelayMs ?? 30);
  }

  function run(rec: AllocRec, group: Json, task: Json, node: DoubleNode) {
    if (closed || rec.alloc.DesiredStatus === 'stop' || rec.alloc.ClientStatus !== 'pending') return;
    const driver = String(task.Driver ?? '');
    taskEvent(rec, 'Task Setup', { DisplayMessage: 'Building Task Directory' });
    const finish = (failed: boolean, description: string) => updateAlloc(rec, (a) => {
      for (const s of Object.values(a.TaskStates)) {
        s.State = 'dead';
        s.Failed = failed;
        s.FinishedAt = new Date().toISOString();
      }
      if (a.ClientStatus !== 'lost') a.ClientStatus = failed ? 'failed' : 'complete';
      a.ClientDescription = description;
    });
    if (driver !== 'raw_exec' && driver !== 'exec') {
      taskEvent(rec, 'Driver Failure', { DriverError: `driver "${driver}" not supported by this double`, DisplayMessage: `driver "${driver}" not supported`, FailsTask: true });
      finish(true, 'Failed tasks');
      return;
    }
    rec.started = startTask({
      job: rec.job, group, task, node, allocId: rec.alloc.ID, allocName: rec.alloc.Name, allocDir: rec.dir,
      namespace: rec.alloc.Namespace, region: 'global', baseEnv: opts.baseEnv ?? pick(process.env, ['PATH', 'HOME', 'LANG', 'TMPDIR']),
    }, {
      onSpawn: () => updateAlloc(rec, (a) => {
        for (const s of Object.values(a.TaskStates)) {
          s.State = 'running';
          s.StartedAt = new Date().toISOString();
          s.Events.push({ Type: 'Started', Time: now(), DisplayMessage: 'Task started by client' });
        }
        a.ClientStatus = 'running';
        a.ClientDescription = 'Tasks are running';
      }),
      onError: (err) => {
        taskEvent(rec, 'Driver Failure', { DriverError: `failed to launch command with executor: ${err.message}`, DisplayMessage: `failed to launch command with executor: ${err.message}`, FailsTask: true });
        finish(true, 'Failed tasks');
      },
      onExit: (code, signal) => {
        clearTimeout(rec.killTimer);
        const signum = signal ? (os.constants.signals[signal] ?? 0) : 0;
        taskEvent(rec, 'Terminated', { ExitCode: code ?? 0, Signal: signum, DisplayMessage: `Exit Code: ${code ?? 0}${signum ? `, Signal: ${signum}` : ''}` });
        if (rec.stopping) {
          taskEvent(rec, 'Killed', { DisplayMessage: 'Task successfully killed' });
          finish(false, 'All tasks have completed');
        } else {
          const failed = code !== 0 || signal !== null;
          if (failed) taskEvent(rec, 'Not Restarting', { DisplayMessage: 'Policy allows no restarts' });
          finish(failed, failed ? 'Failed tasks' : 'All tasks have completed');
        }
      },
    });
  }

  function stopAlloc(rec: AllocRec, description: string) {
    if (['complete', 'failed', 'lost'].includes(rec.alloc.ClientStatus)) return;
    const task = ((rec.job.TaskGroups as Json[]).find((g) => g.Name === rec.alloc.TaskGroup)?.Tasks as Json[] | undefined)?.[0] ?? {};
    const killTimeoutMs = Number(task.KillTimeout ?? 5e9) / 1e6;
    const signal = String(task.KillSignal || 'SIGINT') as NodeJS.Signals;
    rec.stopping = true;
    updateAlloc(rec, (a) => {
      a.DesiredStatus = 'stop';
      a.DesiredDescription = description;
      for (const s of Object.values(a.TaskStates)) s.Events.push({ Type: 'Killing', Time: now(), DisplayMessage: `Sent interrupt. Waiting ${killTimeoutMs / 1000}s before force killing` });
    });
    const child = rec.started?.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      // Like Nomad: the kill signal to the task's process, SIGKILL to everything after kill_timeout.
      try {
        child.kill(signal);
      } catch {
        // gone
      }
      rec.killTimer = setTimeout(() => killGroup(child.pid, 'SIGKILL'), killTimeoutMs);
      rec.killTimer.unref();
    } else {
      updateAlloc(rec, (a) => {
        a.ClientStatus = 'complete';
        for (const s of Object.values(a.TaskStates)) s.State = 'dead';
      });
    }
  }

  // ---- HTTP -------------------------------------------------------------------------------

  async function readBody(req: http.IncomingMessage): Promise<Json> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    if (!text.trim()) return {};
    try {
      const v = JSON.parse(text) as unknown;
      if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('not an object');
      return v as Json;
    } catch (err) {
      throw new HttpError(400, `Failed to decode request body: ${(err as Error).message}`);
    }
  }

  function validateJob(job: unknown): asserts job is Json {
    const errs: string[] = [];
    if (!job || typeof job !== 'object') throw new HttpError(400, 'Job must be specified');
    const j = job as Json;
    if (typeof j.ID !== 'string' || !j.ID) errs.push('Missing job ID');
    else if (/\s/.test(j.ID)) errs.push('Job ID contains a space');
    const type = String(j.Type ?? 'service');
    if (!['service', 'batch', 'system', 'sysbatch'].includes(type)) errs.push(`Invalid job type: "${type}"`);
    if (j.ParameterizedJob && type !== 'batch' && type !== 'sysbatch') errs.push('Parameterized job can only be used with "batch" or "sysbatch" type');
    const groups = j.TaskGroups;
    if (!Array.isArray(groups) || groups.length === 0) errs.push('Missing job task groups');
    else for (const g of groups as Json[]) {
      if (!Array.isArray(g.Tasks) || g.Tasks.length === 0) errs.push(`Task group ${String(g.Name)} validation failed: Missing tasks for task group`);
      else for (const t of g.Tasks as Json[]) if (!t.Name || !t.Driver) errs.push(`Task group ${String(g.Name)} validation failed: Task ${String(t.Name)} validation failed: Missing task name or driver`);
    }
    if (errs.length) throw new HttpError(400, `Job validation failed: ${errs.length} error${errs.length > 1 ? 's' : ''} occurred:\n${errs.map((e) => `\t* ${e}`).join('\n')}\n\n`);
  }

  function answer(res: http.ServerResponse, status: number, body: unknown, idx = index) {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'Content-Type': 'application/json', 'X-Nomad-Index': String(idx), 'X-Nomad-KnownLeader': 'true', 'X-Nomad-LastContact': '0' });
    res.end(text);
  }

  /** Waits (blocking query) until `current()` passes ?index or ?wait expires. */
  async function block(url: URL, req: http.IncomingMessage, current: () => number): Promise<void> {
    const want = Number(url.searchParams.get('index') ?? 0);
    if (!want || current() > want) return;
    const waitMs = Math.min(durationMs(url.searchParams.get('wait'), 5 * 60_000), 10 * 60_000);
    await new Promise<void>((resolve) => {
      const done = () => {
        waiters.delete(check);
        clearTimeout(timer);
        req.off('close', done);
        resolve();
      };
      const check = () => { if (current() > want || closed) done(); };
      const timer = setTimeout(done, waitMs);
      waiters.add(check);
      req.once('close', done);
    });
  }

  function findJob(ns: string, id: string): Json {
    const job = jobs.get(jobKey(ns, id));
    if (!job) throw new HttpError(404, 'job not found');
    return job;
  }

  const jobAllocs = (ns: string, id: string) => [...allocs.values()].filter((r) => r.alloc.Namespace === ns && r.alloc.JobID === id);

  function register(job: Json, ns: string): Json {
    validateJob(job);
    const key = jobKey(ns, String(job.ID));
    const prev = jobs.get(key);
    const stored: Json = {
      ...structuredClone(job), Namespace: ns, Type: job.Type ?? 'service', Name: job.Name ?? job.ID, Stop: false,
      Status: job.ParameterizedJob ? 'running' : 'pending', Version: prev ? Number(prev.Version) + 1 : 0, SubmitTime: now(),
      CreateIndex: prev?.CreateIndex ?? 0, ModifyIndex: 0, JobModifyIndex: 0,
    };
    jobs.set(key, stored);
    const i = commit([jobEvent(stored, 'JobRegistered')]);
    if (!prev) stored.CreateIndex = i;
    stored.ModifyIndex = stored.JobModifyIndex = i;
    return stored;
  }

  async function route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://double');
    const ns = url.searchParams.get('namespace') || 'default';
    const method = req.method ?? 'GET';
    if (opts.token) {
      const sent = (req.headers['x-nomad-token'] as string | undefined) ?? /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1];
      if (sent !== opts.token) throw new HttpError(403, 'Permission denied');
    }
    const p = url.pathname;
    let m: RegExpExecArray | null;

    if (p === '/v1/jobs' && (method === 'PUT' || method === 'POST')) {
      const body = await readBody(req);
      const job = register(body.Job as Json, String((body.Job as Json | undefined)?.Namespace ?? ns));
      const periodic = Boolean(job.ParameterizedJob || job.Periodic);
      const ev = periodic ? undefined : schedule(job, String(job.Namespace), 'job-register');
      return answer(res, 200, { EvalID: ev?.ID ?? '', EvalCreateIndex: ev?.CreateIndex ?? 0, JobModifyIndex: job.JobModifyIndex, Warnings: '', Index: index, LastContact: 0, KnownLeader: true });
    }
    if (p === '/v1/jobs' && method === 'GET') {
      const prefix = url.searchParams.get('prefix') ?? '';
      await block(url, req, () => index);
      const list = [...jobs.values()].filter((j) => j.Namespace === ns && String(j.ID).startsWith(prefix))
        .map((j) => ({ ID: j.ID, ParentID: j.ParentID ?? '', Name: j.Name, Namespace: j.Namespace, Type: j.Type, Status: j.Status, Stop: j.Stop, ParameterizedJob: Boolean(j.ParameterizedJob), ModifyIndex: j.ModifyIndex }));
      return answer(res, 200, list);
    }
    if ((m = /^\/v1\/job\/(.+)\/dispatch$/.exec(p)) && (method === 'PUT' || method === 'POST')) {
      const id = decodeURIComponent(m[1]!);
      const parent = findJob(ns, id);
      const body = await readBody(req);
      const pj = parent.ParameterizedJob as Json | undefined;
      if (!pj || parent.Dispatched) throw new HttpError(400, `Specified job "${id}" is not a parameterized job`);
      if (parent.Stop) throw new HttpError(400, `Job "${id}" is stopped`);
      const meta = (body.Meta ?? {}) as Record<string, string>;
      const required = (pj.MetaRequired as string[] | null) ?? [];
      const optional = (pj.MetaOptional as string[] | null) ?? [];
      const missing = required.filter((k) => !(k in meta));
      if (missing.length) throw new HttpError(400, `Dispatch did not provide required meta keys: [${missing.join(' ')}]`);
      const extra = Object.keys(meta).filter((k) => !required.includes(k) && !optional.includes(k));
      if (extra.length) throw new HttpError(400, `Dispatch request included unpermitted metadata keys: [${extra.join(' ')}]`);
      if ((pj.Payload ?? 'optional') === 'forbidden' && body.Payload) throw new HttpError(400, 'Payload is not allowed');
      if (pj.Payload === 'required' && !body.Payload) throw new HttpError(400, 'Payload is required');
      const childId = `${id}/dispatch-${Math.floor(Date.now() / 1000)}-${crypto.randomBytes(4).toString('hex')}`;
      const child = register({
        ...structuredClone(parent), ID: childId, Name: childId, ParentID: id, Dispatched: true,
        Meta: { ...((parent.Meta as Record<string, string> | undefined) ?? {}), ...meta },
      }, ns);
      child.Status = 'pending';
      const ev = schedule(child, ns, 'job-register');
      return answer(res, 200, { Index: index, JobCreateIndex: child.CreateIndex, EvalID: ev.ID, EvalCreateIndex: ev.CreateIndex, DispatchedJobID: childId });
    }
    if ((m = /^\/v1\/job\/(.+)\/allocations$/.exec(p)) && method === 'GET') {
      const id = decodeURIComponent(m[1]!);
      const current = () => Math.max(1, ...jobAllocs(ns, id).map((r) => r.alloc.ModifyIndex), Number(jobs.get(jobKey(ns, id))?.ModifyIndex ?? 1));
      await block(url, req, current);
      return answer(res, 200, jobAllocs(ns, id).map((r) => stub(r.alloc)), current());
    }
    if ((m = /^\/v1\/job\/(.+)$/.exec(p))) {
      const id = decodeURIComponent(m[1]!);
      if (method === 'GET') {
        const job = findJob(ns, id);
        await block(url, req, () => Number(findJobOrNull(ns, id)?.ModifyIndex ?? index));
        return answer(res, 200, jobs.get(jobKey(ns, id)) ?? job, Number(job.ModifyIndex));
      }
      if (method === 'DELETE') {
        const job = findJob(ns, id);
        const purge = url.searchParams.get('purge') === 'true';
        job.Stop = true;
        for (const rec of jobAllocs(ns, id)) stopAlloc(rec, 'alloc is being stopped due to job being stopped');
        if (purge) jobs.delete(jobKey(ns, id));
        const i = commit([jobEvent(job, 'JobDeregistered')]);
        const ev: Eval = { ID: uuid(), Namespace: ns, JobID: id, Type: String(job.Type), TriggeredBy: 'job-deregister', Status: 'complete', StatusDescription: '', FailedTGAllocs: null, BlockedEval: '', CreateIndex: i, ModifyIndex: i };
        evals.set(ev.ID, ev);
        return answer(res, 200, { EvalID: ev.ID, EvalCreateIndex: i, JobModifyIndex: i, Index: i });
      }
    }
    if ((m = /^\/v1\/allocation\/([^/]+)\/stop$/.exec(p)) && (method === 'PUT' || method === 'POST')) {
      const rec = allocs.get(m[1]!);
      if (!rec) throw new HttpError(404, 'alloc not found');
      stopAlloc(rec, 'alloc was stopped by the user');
      return answer(res, 200, { EvalID: uuid(), Index: index });
    }
    if ((m = /^\/v1\/allocation\/([^/]+)$/.exec(p)) && method === 'GET') {
      const rec = allocs.get(m[1]!);
      if (!rec) throw new HttpError(404, 'alloc not found');
      await block(url, req, () => rec.alloc.ModifyIndex);
      return answer(res, 200, { ...stub(rec.alloc), Job: rec.job, AllocatedResources: { Shared: { Ports: [], Networks: [] }, Tasks: {} }, NetworkStatus: null }, rec.alloc.ModifyIndex);
    }
    if ((m = /^\/v1\/evaluation\/([^/]+)$/.exec(p)) && method === 'GET') {
      const ev = evals.get(m[1]!);
      if (!ev) throw new HttpError(404, 'eval not found');
      await block(url, req, () => ev.ModifyIndex);
      return answer(res, 200, { ...ev }, ev.ModifyIndex);
    }
    if (p === '/v1/nodes' && method === 'GET') {
      await block(url, req, () => Math.max(...nodes.map((n) => n.ModifyIndex)));
      return answer(res, 200, nodes.map((n) => ({
        ID: n.ID, Name: n.Name, Address: '127.0.0.1', Datacenter: n.Datacenter, NodePool: 'default', NodeClass: '', Status: n.Status,
        SchedulingEligibility: 'eligible', Drain: false, Drivers: { raw_exec: { Detected: true, Healthy: true }, exec: { Detected: true, Healthy: true } },
        CreateIndex: 1, ModifyIndex: n.ModifyIndex,
      })));
    }
    if (p === '/v1/event/stream' && method === 'GET') return stream(url, req, res, ns);
    if (p.startsWith('/v1/')) throw new HttpError(method === 'GET' || method === 'PUT' || method === 'POST' || method === 'DELETE' ? 404 : 405, method === 'GET' || method === 'PUT' || method === 'POST' || method === 'DELETE' ? '' : 'Invalid method');
    throw new HttpError(404, '');
  }

  function findJobOrNull(ns: string, id: string): Json | undefined {
    return jobs.get(jobKey(ns, id));
  }

  function stream(url: URL, req: http.IncomingMessage, res: http.ServerResponse, ns: string) {
    const topics = url.searchParams.getAll('topic').map((t) => {
      const [topic, key] = t.split(':');
      return { topic: topic || '*', key: key || '*' };
    });
    if (topics.length === 0) topics.push({ topic: '*', key: '*' });
    const from = Number(url.searchParams.get('index') ?? 0);
    const wanted = (e: Json) => (ns === '*' || !e.Namespace || e.Namespace === ns)
      && topics.some((t) => (t.topic === '*' || t.topic === e.Topic) && (t.key === '*' || t.key === e.Key || ((e.FilterKeys as string[] | undefined) ?? []).includes(t.key)));
    res.writeHead(200, { 'Content-Type': 'application/json', 'X-Nomad-Index': String(index) });
    const send = (batch: { Index: number; Events: Json[] }) => {
      if (batch.Index < from) return;
      const events = batch.Events.filter(wanted);
      if (events.length) res.write(JSON.stringify({ Index: batch.Index, Events: events }) + '\n');
    };
    for (const batch of eventLog) send(batch);
    streams.add(send);
    const beat = setInterval(() => res.write('{}\n'), heartbeatMs);
    const end = () => {
      clearInterval(beat);
      streams.delete(send);
    };
    req.once('close', end);
    res.once('close', end);
  }

  const server = http.createServer((req, res) => {
    route(req, res).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : 500;
      const message = err instanceof Error ? err.message : String(err);
      if (!res.headersSent) res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Nomad-Index': String(index) });
      res.end(message);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    nodes: nodes.map((n) => ({ ID: n.ID, Name: n.Name })),
    markNodeDown(id) {
      const node = nodes.find((n) => n.ID === id);
      if (!node) throw new Error(`no node ${id}`);
      node.Status = 'down';
      node.ModifyIndex = commit([{ Topic: 'Node', Type: 'NodeEvent', Key: node.ID, Payload: { Node: { ID: node.ID, Name: node.Name, Status: 'down' } } }]);
      for (const rec of allocs.values()) {
        if (rec.alloc.NodeID !== id || ['complete', 'failed', 'lost'].includes(rec.alloc.ClientStatus)) continue;
        // The VM is gone: so are its processes.
        rec.stopping = true;
        killGroup(rec.started?.child.pid, 'SIGKILL');
        updateAlloc(rec, (a) => {
          a.DesiredStatus = 'stop';
          a.ClientStatus = 'lost';
          a.ClientDescription = 'alloc is lost since its node is down';
        });
      }
    },
    logs(allocId) {
      const rec = allocs.get(allocId);
      if (!rec?.started) return '';
      const read = (f: string) => { try { return fs.readFileSync(f, 'utf8'); } catch { return ''; } };
      return read(rec.started.stdoutFile) + read(rec.started.stderrFile);
    },
    allocations: () => [...allocs.values()].map((r) => stub(r.alloc)),
    async close() {
      closed = true;
      await Promise.all([...allocs.values()].map(async (rec) => {
        clearTimeout(rec.killTimer);
        const child = rec.started?.child;
        if (child && child.exitCode === null && child.signalCode === null) {
          child.kill('SIGTERM');
          await Promise.race([new Promise((r) => child.once('exit', r)), new Promise((r) => setTimeout(r, 5000))]);
          killGroup(child.pid, 'SIGKILL');
        }
      }));
      for (const w of [...waiters]) w();
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}

function pick(env: NodeJS.ProcessEnv, keys: string[]): Record<string, string> {
  return Object.fromEntries(keys.flatMap((k) => (env[k] ? [[k, env[k]!]] : [])));
}
