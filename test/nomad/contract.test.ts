// The Nomad client (server/scheduler/nomad/client.ts) against Nomad's HTTP API: the real Nomad
// at NOMAD_ADDR when it is set, else the double. Tasks are real processes (node -e ...).
// Double-only checks (token refusal, `{}` heartbeats within a second, node loss) are skipped
// against a real Nomad; everything else must hold for both.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nomadClient, NomadError, type AllocationStub, type EventBatch, type NomadClient } from '../../server/scheduler/nomad/client.ts';
import { freePort } from '../fixtures/processes.ts';
import { waitFor } from '../harness/waitFor.ts';
import { nomadTarget, REAL_NOMAD, type NomadTarget } from './target.ts';

let t: NomadTarget;
let nomad: NomadClient;
let dir: string;
const onDouble = REAL_NOMAD ? it.skip : it;

// The task: writes "hello <who>" to the file named by its meta, then exits with the code it was
// given, or stays up until it is killed (code "run").
const SCRIPT = `
const fs = require('node:fs');
fs.writeFileSync(process.env.OUT_FILE, process.env.GREETING);
const mode = process.argv[1];
if (mode === 'run') { process.on('SIGTERM', () => { fs.appendFileSync(process.env.OUT_FILE, ' bye'); process.exit(0); }); setInterval(() => {}, 1000); }
else process.exit(Number(mode));
`;

function testJob(id: string) {
  return {
    ID: id,
    Name: id,
    Type: 'batch',
    Datacenters: ['*'],
    ParameterizedJob: { Payload: 'forbidden', MetaRequired: ['who', 'out'], MetaOptional: ['mode'] },
    Meta: { mode: 'run' },
    TaskGroups: [{
      Name: 'g',
      Count: 1,
      RestartPolicy: { Attempts: 0, Mode: 'fail' },
      ReschedulePolicy: { Attempts: 0, Unlimited: false },
      Tasks: [{
        Name: 't',
        Driver: 'raw_exec',
        Config: { command: process.execPath, args: ['-e', SCRIPT, '${NOMAD_META_mode}'] },
        Env: { OUT_FILE: '${NOMAD_META_out}', GREETING: 'hello ${NOMAD_META_who}' },
        KillSignal: 'SIGTERM',
        KillTimeout: 5_000_000_000,
        Resources: { CPU: 100, MemoryMB: 64 },
      }],
    }],
  };
}

let jobId: string;

beforeAll(async () => {
  t = await nomadTarget({ heartbeatMs: 200 });
  nomad = t.client;
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'nomad-contract-'));
  jobId = t.jobId('caravan-contract');
  await nomad.registerJob(testJob(jobId));
});
afterAll(async () => {
  await nomad?.stopJob(jobId, { purge: true }).catch(() => undefined);
  await t?.close();
  await fs.rm(dir, { recursive: true, force: true });
});

async function allocOf(dispatched: string): Promise<AllocationStub> {
  return waitFor(async () => (await nomad.jobAllocations(dispatched)).value[0], { timeoutMs: 15_000, what: `an allocation of ${dispatched}` });
}

/** Follows one allocation with blocking queries until `done` holds. */
async function follow(allocId: string, done: (a: AllocationStub) => boolean): Promise<AllocationStub> {
  let index = 0;
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { index: next, value } = await nomad.allocation(allocId, { index, wait: '5s' });
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`allocation ${allocId} stayed ${value.ClientStatus}`);
    index = next;
  }
}

describe(`Nomad HTTP API (${REAL_NOMAD ? `real Nomad at ${REAL_NOMAD}` : 'the double'})`, () => {
  it('registers a parameterized batch job and reads it back', async () => {
    const job = await nomad.getJob(jobId);
    expect(job).toMatchObject({ ID: jobId, Type: 'batch' });
    expect(job!.ParameterizedJob).toMatchObject({ MetaRequired: ['who', 'out'], MetaOptional: ['mode'] });
  });

  it('answers an unknown job with null from getJob and a plain-text 404', async () => {
    expect(await nomad.getJob(`${jobId}-missing`)).toBeNull();
    const err = await nomad.jobAllocations(`${jobId}-missing`).then(() => null, (e: unknown) => e);
    // Nomad lists no allocations for an unknown job rather than failing: both are fine here.
    if (err) expect(err).toBeInstanceOf(NomadError);
    const res = await fetch(`${t.addr}/v1/job/${jobId}-missing`, { headers: t.token ? { 'X-Nomad-Token': t.token } : {} });
    expect(res.status).toBe(404);
    expect((await res.text()).trim()).toBe('job not found');
  });

  it('refuses a dispatch without the required meta, naming the keys', async () => {
    const err = await nomad.dispatch(jobId, { who: 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NomadError);
    expect((err as NomadError).status).toBeGreaterThanOrEqual(400);
    expect((err as NomadError).message).toMatch(/required meta keys: \[out\]/);
  });

  it('dispatches with meta: the task runs as a process with NOMAD_META_* interpolated, pending -> running -> complete', async () => {
    const out = path.join(dir, 'run.txt');
    const d = await nomad.dispatch(jobId, { who: 'caravan', out });
    expect(d.DispatchedJobID).toMatch(new RegExp(`^${jobId}/dispatch-\\d{10}-[0-9a-f]{8}$`));
    const alloc = await allocOf(d.DispatchedJobID);
    expect(['pending', 'running']).toContain(alloc.ClientStatus);
    const running = await follow(alloc.ID, (a) => a.ClientStatus === 'running');
    expect(running.TaskStates?.t?.State).toBe('running');
    await waitFor(async () => (await fs.readFile(out, 'utf8').catch(() => '')) === 'hello caravan', { what: 'the task output' });

    // Stopping sends the kill signal: the task says goodbye and the allocation completes.
    await nomad.stopJob(d.DispatchedJobID, { purge: true });
    const stopped = await follow(alloc.ID, (a) => a.ClientStatus === 'complete');
    expect(stopped.DesiredStatus).toBe('stop');
    expect(stopped.TaskStates?.t?.State).toBe('dead');
    expect(stopped.TaskStates?.t?.Failed).toBe(false);
    expect(await fs.readFile(out, 'utf8')).toBe('hello caravan bye');
    expect(await nomad.getJob(d.DispatchedJobID)).toBeNull();
  });

  it('reports a task that exits non-zero as a failed allocation with the exit code', async () => {
    const d = await nomad.dispatch(jobId, { who: 'x', out: path.join(dir, 'fail.txt'), mode: '3' });
    const alloc = await allocOf(d.DispatchedJobID);
    const failed = await follow(alloc.ID, (a) => a.ClientStatus === 'failed' || a.ClientStatus === 'complete');
    expect(failed.ClientStatus).toBe('failed');
    expect(failed.TaskStates?.t?.Failed).toBe(true);
    expect(failed.TaskStates?.t?.Events?.find((e) => e.Type === 'Terminated')?.ExitCode).toBe(3);
    await nomad.stopJob(d.DispatchedJobID, { purge: true });
  });

  it('blocks a query until the index moves or the wait runs out', async () => {
    const d = await nomad.dispatch(jobId, { who: 'x', out: path.join(dir, 'block.txt') });
    const alloc = await follow((await allocOf(d.DispatchedJobID)).ID, (a) => a.ClientStatus === 'running');
    const first = await nomad.allocation(alloc.ID);
    expect(first.index).toBeGreaterThan(0);
    // Nothing changes: the answer comes after the wait, with the same index.
    const t0 = Date.now();
    const idle = await nomad.allocation(alloc.ID, { index: first.index, wait: '1s' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    expect(idle.index).toBe(first.index);
    // A change wakes a waiting query before its wait.
    const waiting = nomad.allocation(alloc.ID, { index: first.index, wait: '30s' });
    const t1 = Date.now();
    await nomad.stopJob(d.DispatchedJobID, { purge: true });
    const woke = await waiting;
    expect(Date.now() - t1).toBeLessThan(20_000);
    expect(woke.index).toBeGreaterThan(first.index);
    expect(woke.value.DesiredStatus).toBe('stop');
  });

  it('streams allocation events (NDJSON) for a dispatch, through to its end', async () => {
    const abort = new AbortController();
    const seen: EventBatch[] = [];
    const d = await nomad.dispatch(jobId, { who: 'x', out: path.join(dir, 'events.txt'), mode: '0' });
    const reading = (async () => {
      for await (const batch of nomad.events({ topics: ['Allocation'], index: 0, signal: abort.signal })) {
        seen.push(batch);
        const done = batch.Events.some((e) => (e.Payload?.Allocation as AllocationStub | undefined)?.JobID === d.DispatchedJobID
          && (e.Payload?.Allocation as AllocationStub).ClientStatus === 'complete');
        if (done) break;
      }
    })();
    await Promise.race([reading, new Promise((_, reject) => setTimeout(() => reject(new Error('no complete event within 20 s')), 20_000))]);
    abort.abort();
    const ours = seen.flatMap((b) => b.Events).filter((e) => (e.Payload?.Allocation as AllocationStub | undefined)?.JobID === d.DispatchedJobID);
    expect(ours.every((e) => e.Topic === 'Allocation')).toBe(true);
    const statuses = ours.map((e) => (e.Payload!.Allocation as AllocationStub).ClientStatus);
    expect(statuses.at(-1)).toBe('complete');
    expect(seen.every((b, i) => i === 0 || b.Index >= seen[i - 1]!.Index)).toBe(true);
    await nomad.stopJob(d.DispatchedJobID, { purge: true });
  });

  it('lists client nodes', async () => {
    const nodes = await nomad.listNodes();
    expect(nodes.length).toBeGreaterThan(0);
    expect(nodes[0]).toMatchObject({ ID: expect.any(String), Name: expect.any(String), Status: 'ready' });
  });

  it('says clearly when Nomad cannot be reached', async () => {
    const port = await freePort();
    const err = await nomadClient({ addr: `http://127.0.0.1:${port}` }).getJob('x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NomadError);
    expect((err as NomadError).message).toBe(`Nomad is unreachable (GET /v1/job/x): ECONNREFUSED at http://127.0.0.1:${port}`);
  });
});

describe('the double only', () => {
  onDouble('sends `{}` heartbeats on the event stream, which the client skips', async () => {
    const res = await fetch(`${t.addr}/v1/event/stream?topic=Node&index=999999999`);
    const reader = res.body!.getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toBe('{}\n');
    await reader.cancel();
  });

  onDouble('refuses requests without the token when it has one (403, plain text)', async () => {
    const { startNomadDouble } = await import('./double.ts');
    const guarded = await startNomadDouble({ token: 'secret-token' });
    try {
      const err = await nomadClient({ addr: guarded.url }).listNodes().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NomadError);
      expect((err as NomadError).message).toBe(`Nomad answered 403 to GET /v1/nodes: Permission denied`);
      expect(await nomadClient({ addr: guarded.url, token: 'secret-token' }).listNodes()).toHaveLength(1);
    } finally {
      await guarded.close();
    }
  });
});
