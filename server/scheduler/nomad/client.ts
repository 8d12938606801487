// A small typed client for the subset of Nomad's HTTP API the nomad scheduler needs: register a
// job, dispatch a parameterized one, read jobs, evaluations and allocations (with blocking
// queries), follow the event stream, stop and purge, list nodes. Answers are validated with zod
// (loosely: Nomad adds fields between versions); errors carry Nomad's status and plain-text body.
import { z } from 'zod';

export interface NomadClientOptions {
  /** e.g. http://127.0.0.1:4646 */
  addr: string;
  /** Sent as X-Nomad-Token. */
  token?: string;
  namespace?: string;
  region?: string;
  /** Per-request limit for ordinary requests; default 10 s. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** Nomad answered with an error status, or could not be reached (status 0). */
export class NomadError extends Error {
  override name = 'NomadError';
  constructor(readonly status: number, readonly body: string, readonly what: string) {
    super(status === 0 ? `Nomad is unreachable (${what}): ${body}` : `Nomad answered ${status} to ${what}: ${body.trim().slice(0, 500) || '(empty body)'}`);
  }
}

export interface BlockingOptions {
  /** Return only once the resource's index is past this one (or `wait` passed). */
  index?: number;
  /** Nomad duration, e.g. "30s", "5m" (Nomad caps it at 10 m). */
  wait?: string;
  signal?: AbortSignal;
}

export interface Indexed<T> {
  /** X-Nomad-Index of the answer: pass it as `index` to block on the next change. */
  index: number;
  value: T;
}

const loose = <T extends z.ZodRawShape>(shape: T) => z.looseObject(shape);

export const TaskEvent = loose({
  Type: z.string(),
  Time: z.number().optional(),
  DisplayMessage: z.string().optional(),
  Message: z.string().optional(),
  DriverError: z.string().optional(),
  ExitCode: z.number().optional(),
  Signal: z.number().optional(),
  Details: z.record(z.string(), z.string()).nullish(),
});
export type TaskEvent = z.infer<typeof TaskEvent>;

export const TaskState = loose({
  State: z.string(),
  Failed: z.boolean().optional(),
  Restarts: z.number().optional(),
  Events: z.array(TaskEvent).nullish(),
});
export type TaskState = z.infer<typeof TaskState>;

export const ClientStatus = z.enum(['pending', 'running', 'complete', 'failed', 'lost', 'unknown']);

export const AllocationStub = loose({
  ID: z.string(),
  EvalID: z.string().optional(),
  JobID: z.string(),
  Namespace: z.string().optional(),
  NodeID: z.string(),
  NodeName: z.string().optional(),
  TaskGroup: z.string().optional(),
  ClientStatus: z.string(),
  ClientDescription: z.string().optional(),
  DesiredStatus: z.string(),
  DesiredDescription: z.string().optional(),
  TaskStates: z.record(z.string(), TaskState).nullish(),
  CreateIndex: z.number().optional(),
  ModifyIndex: z.number(),
});
export type AllocationStub = z.infer<typeof AllocationStub>;

export const Allocation = AllocationStub.extend({
  AllocatedResources: loose({
    Shared: loose({
      Ports: z.array(loose({ Label: z.string(), Value: z.number(), To: z.number().optional(), HostIP: z.string().optional() })).nullish(),
    }).nullish(),
  }).nullish(),
  NetworkStatus: z.unknown().optional(),
});
export type Allocation = z.infer<typeof Allocation>;

export const AllocMetric = loose({
  NodesEvaluated: z.number().optional(),
  NodesFiltered: z.number().optional(),
  NodesExhausted: z.number().optional(),
  NodesAvailable: z.record(z.string(), z.number()).nullish(),
  ClassFiltered: z.record(z.string(), z.number()).nullish(),
  ConstraintFiltered: z.record(z.string(), z.number()).nullish(),
  DimensionExhausted: z.record(z.string(), z.number()).nullish(),
});
export type AllocMetric = z.infer<typeof AllocMetric>;

export const Evaluation = loose({
  ID: z.string(),
  JobID: z.string(),
  Status: z.string(),
  StatusDescription: z.string().optional(),
  TriggeredBy: z.string().optional(),
  FailedTGAllocs: z.record(z.string(), AllocMetric).nullish(),
  BlockedEval: z.string().optional(),
  ModifyIndex: z.number(),
});
export type Evaluation = z.infer<typeof Evaluation>;

export const NodeStub = loose({
  ID: z.string(),
  Name: z.string(),
  Address: z.string().optional(),
  Datacenter: z.string().optional(),
  NodePool: z.string().optional(),
  NodeClass: z.string().optional(),
  Status: z.string(),
  SchedulingEligibility: z.string().optional(),
  Drain: z.boolean().optional(),
});
export type NodeStub = z.infer<typeof NodeStub>;

/** The job fields we read back; the rest passes through untouched. */
export const Job = loose({
  ID: z.string(),
  Name: z.string().optional(),
  Namespace: z.string().optional(),
  Type: z.string().optional(),
  Status: z.string().optional(),
  ParentID: z.string().optional(),
  Dispatched: z.boolean().optional(),
  Meta: z.record(z.string(), z.string()).nullish(),
  ParameterizedJob: loose({
    Payload: z.string().optional(),
    MetaRequired: z.array(z.string()).nullish(),
    MetaOptional: z.array(z.string()).nullish(),
  }).nullish(),
  JobModifyIndex: z.number().optional(),
  ModifyIndex: z.number().optional(),
});
export type Job = z.infer<typeof Job>;

export const RegisterResponse = loose({
  EvalID: z.string().optional(),
  EvalCreateIndex: z.number().optional(),
  JobModifyIndex: z.number(),
  Warnings: z.string().optional(),
});
export type RegisterResponse = z.infer<typeof RegisterResponse>;

export const DispatchResponse = loose({
  DispatchedJobID: z.string().min(1),
  EvalID: z.string().optional(),
  EvalCreateIndex: z.number().optional(),
  JobCreateIndex: z.number().optional(),
  Index: z.number().optional(),
});
export type DispatchResponse = z.infer<typeof DispatchResponse>;

export const DeregisterResponse = loose({
  EvalID: z.string().optional(),
  EvalCreateIndex: z.number().optional(),
  JobModifyIndex: z.number().optional(),
});
export type DeregisterResponse = z.infer<typeof DeregisterResponse>;

export const StreamEvent = loose({
  Topic: z.string(),
  Type: z.string(),
  Key: z.string().optional(),
  Namespace: z.string().optional(),
  Index: z.number(),
  Payload: z.record(z.string(), z.unknown()).nullish(),
});
export type StreamEvent = z.infer<typeof StreamEvent>;

/** One line of the event stream; heartbeats (`{}`) are skipped by `events()`. */
export const EventBatch = loose({ Index: z.number(), Events: z.array(StreamEvent) });
export type EventBatch = z.infer<typeof EventBatch>;

export interface NomadClient {
  readonly addr: string;
  registerJob(job: Record<string, unknown>): Promise<RegisterResponse>;
  /** null when Nomad does not know the job. */
  getJob(id: string): Promise<Job | null>;
  dispatch(id: string, meta: Record<string, string>): Promise<DispatchResponse>;
  jobAllocations(id: string, opts?: BlockingOptions): Promise<Indexed<AllocationStub[]>>;
  allocation(id: string, opts?: BlockingOptions): Promise<Indexed<Allocation>>;
  evaluation(id: string, opts?: BlockingOptions): Promise<Indexed<Evaluation>>;
  /** Stops the job (its allocations get their kill signal); `purge` removes it at once. */
  stopJob(id: string, opts?: { purge?: boolean }): Promise<DeregisterResponse>;
  listNodes(): Promise<NodeStub[]>;
  /** Follows `/v1/event/stream` for the topics until the signal aborts or the stream ends. */
  events(opts: { topics: string[]; index?: number; signal?: AbortSignal }): AsyncGenerator<EventBatch>;
}

/** Nomad duration ("250ms", "30s", "5m") in milliseconds. */
export function durationMs(wait: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(wait.trim());
  if (!m) throw new Error(`not a Nomad duration: ${wait}`);
  return Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
}

export function nomadClient(opts: NomadClientOptions): NomadClient {
  const base = opts.addr.replace(/\/+$/, '');
  const doFetch = opts.fetch ?? fetch;
  const timeoutMs = opts.timeoutMs ?? 10_000;

  function url(path: string, query: Record<string, string | number | undefined> = {}, multi: Record<string, string[]> = {}): string {
    const u = new URL(base + path);
    if (opts.namespace) u.searchParams.set('namespace', opts.namespace);
    if (opts.region) u.searchParams.set('region', opts.region);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) u.searchParams.set(k, String(v));
    for (const [k, vs] of Object.entries(multi)) for (const v of vs) u.searchParams.append(k, v);
    return u.toString();
  }

  function headers(): Record<string, string> {
    return { Accept: 'application/json', ...(opts.token ? { 'X-Nomad-Token': opts.token } : {}) };
  }

  async function call(method: string, path: string, init: { query?: Record<string, string | number | undefined>; body?: unknown; signal?: AbortSignal; timeoutMs?: number } = {}): Promise<{ res: Response; text: string }> {
    const what = `${method} ${path}`;
    const signals = [AbortSignal.timeout(init.timeoutMs ?? timeoutMs), ...(init.signal ? [init.signal] : [])];
    let res: Response;
    let text: string;
    try {
      res = await doFetch(url(path, init.query), {
        method,
        headers: { ...headers(), ...(init.body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
        ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
        signal: AbortSignal.any(signals),
      });
      text = await res.text();
    } catch (err) {
      if (init.signal?.aborted) throw err;
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new NomadError(0, `${cause?.code ?? cause?.message ?? (err as Error).message} at ${base}`, what);
    }
    if (!res.ok) throw new NomadError(res.status, text, what);
    return { res, text };
  }

  function parse<T extends z.ZodType>(schema: T, text: string, what: string): z.output<T> {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new NomadError(502, `not JSON: ${text.slice(0, 200)}`, what);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw new NomadError(502, `unexpected answer shape: ${parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(root)'} ${i.message}`).join('; ')}`, what);
    }
    return parsed.data;
  }

  async function blocking<T extends z.ZodType>(path: string, schema: T, o: BlockingOptions = {}): Promise<Indexed<z.output<T>>> {
    const waitMs = o.wait ? durationMs(o.wait) : 0;
    const { res, text } = await call('GET', path, {
      query: { index: o.index, wait: o.wait },
      ...(o.signal ? { signal: o.signal } : {}),
      // Nomad adds up to wait/16 of jitter; leave room for it and for the answer.
      timeoutMs: o.index !== undefined ? Math.ceil(waitMs + waitMs / 16) + timeoutMs : timeoutMs,
    });
    return { index: Number(res.headers.get('x-nomad-index') ?? 0), value: parse(schema, text, `GET ${path}`) };
  }

  const enc = encodeURIComponent;

  return {
    addr: base,

    async registerJob(job) {
      const { text } = await call('PUT', '/v1/jobs', { body: { Job: job } });
      return parse(RegisterResponse, text, 'PUT /v1/jobs');
    },

    async getJob(id) {
      try {
        const { text } = await call('GET', `/v1/job/${enc(id)}`);
        return parse(Job, text, `GET /v1/job/${id}`);
      } catch (err) {
        if (err instanceof NomadError && err.status === 404) return null;
        throw err;
      }
    },

    async dispatch(id, meta) {
      const path = `/v1/job/${enc(id)}/dispatch`;
      const { text } = await call('PUT', path, { body: { Meta: meta } });
      return parse(DispatchResponse, text, `PUT ${path}`);
    },

    jobAllocations: (id, o) => blocking(`/v1/job/${enc(id)}/allocations`, z.array(AllocationStub), o),
    allocation: (id, o) => blocking(`/v1/allocation/${enc(id)}`, Allocation, o),
    evaluation: (id, o) => blocking(`/v1/evaluation/${enc(id)}`, Evaluation, o),

    async stopJob(id, o = {}) {
      const path = `/v1/job/${enc(id)}`;
      const { text } = await call('DELETE', path, { query: o.purge ? { purge: 'true' } : {} });
      return parse(DeregisterResponse, text, `DELETE ${path}`);
    },

    async listNodes() {
      const { text } = await call('GET', '/v1/nodes');
      return parse(z.array(NodeStub), text, 'GET /v1/nodes');
    },

    async *events(o) {
      const what = 'GET /v1/event/stream';
      let res: Response;
      try {
        res = await doFetch(url('/v1/event/stream', { index: o.index }, { topic: o.topics }), {
          headers: headers(),
          ...(o.signal ? { signal: o.signal } : {}),
        });
      } catch (err) {
        if (o.signal?.aborted) return;
        throw new NomadError(0, `${(err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message} at ${base}`, what);
      }
      if (!res.ok || !res.body) throw new NomadError(res.status, await res.text(), what);
      const decoder = new TextDecoder();
      let buffered = '';
      try {
        const reader = res.body.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          buffered += decoder.decode(value, { stream: true });
          let nl: number;
          while ((nl = buffered.indexOf('\n')) >= 0) {
            const line = buffered.slice(0, nl).trim();
            buffered = buffered.slice(nl + 1);
            if (!line || line === '{}') continue; // heartbeat
            yield parse(EventBatch, line, what);
          }
        }
      } catch (err) {
        if (o.signal?.aborted) return;
        throw err instanceof NomadError ? err : new NomadError(0, `the event stream broke: ${(err as Error).message}`, what);
      }
    },
  };
}
