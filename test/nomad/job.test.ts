// The browser-session job files: the JSON the control plane registers is usable, declares
// every meta key the scheduler dispatches, maps them to the launcher's env, and stays in step
// with the HCL (parsed by the real Nomad when there is one; compared key by key otherwise).
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LauncherEnv } from '../../agent/config.ts';
import { loadConfig } from '../../server/config.ts';
import { baseJob, DEFAULT_JOB_FILE, DISPATCH_META_KEYS, loadJobFile, parseCommand, pinnedJob } from '../../server/scheduler/nomad/job.ts';
import { interpolate } from './doubleTask.ts';
import { REAL_NOMAD } from './target.ts';

interface Task { Driver: string; Env: Record<string, string>; Config: { command: string; args?: string[] }; KillTimeout: number; KillSignal: string }
interface Json {
  [k: string]: unknown;
  ID: string;
  Type: string;
  Meta: Record<string, string>;
  ParameterizedJob: { MetaRequired: string[]; MetaOptional: string[] };
  TaskGroups: Array<{ RestartPolicy: unknown; ReschedulePolicy: unknown; Tasks: Task[] }>;
}
const load = async (): Promise<Json> => (await loadJobFile()) as unknown as Json;

const HCL = path.join(path.dirname(DEFAULT_JOB_FILE), 'browser-session.nomad.hcl');
const task = (job: Json): Task => job.TaskGroups[0]!.Tasks[0]!;

describe('infra/nomad/browser-session.json', () => {
  it('is a parameterized batch job with one launcher task, no restarts, no reschedules and a 30 s kill timeout', async () => {
    const job = await load();
    expect(job).toMatchObject({ ID: 'caravan-browser-session', Type: 'batch', ParameterizedJob: { Payload: 'forbidden', MetaRequired: ['session_id'] } });
    expect(job.TaskGroups[0]).toMatchObject({ Count: 1, RestartPolicy: { Attempts: 0, Mode: 'fail' }, ReschedulePolicy: { Attempts: 0, Unlimited: false } });
    expect(task(job)).toMatchObject({ Driver: 'raw_exec', KillSignal: 'SIGTERM', KillTimeout: 30_000_000_000, Resources: { CPU: expect.any(Number), MemoryMB: expect.any(Number) } });
  });

  it('declares every meta key the scheduler dispatches, with a default for each optional one', async () => {
    const job = await load();
    const declared = [...job.ParameterizedJob.MetaRequired, ...job.ParameterizedJob.MetaOptional].sort();
    expect(declared).toEqual([...DISPATCH_META_KEYS].sort());
    for (const k of job.ParameterizedJob.MetaOptional) expect(job.Meta, k).toHaveProperty(k);
  });

  it('gives the launcher a valid environment from dispatch meta (and from the defaults alone)', async () => {
    const env = task(await load()).Env;
    const dispatched = {
      NOMAD_META_session_id: 'sess_1', NOMAD_META_launcher_token: 'tok', NOMAD_META_keep_alive: 'true', NOMAD_META_viewport: '1024x640',
      NOMAD_META_control_url: 'http://10.0.0.1:8420', NOMAD_META_node_id: 'vm-1', NOMAD_META_agent_port: '9224',
      NOMAD_META_context_get_url: '', NOMAD_META_context_put_url: '', NOMAD_META_context_max_bytes: '', NOMAD_TASK_DIR: '/alloc/launcher/local',
    };
    const resolved = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, interpolate(v, dispatched)]));
    expect(Object.values(resolved).join(' ')).not.toContain('${');
    expect(LauncherEnv.parse(resolved)).toMatchObject({
      sessionId: 'sess_1', launcherToken: 'tok', keepAlive: true, viewport: { width: 1024, height: 640 },
      controlUrl: 'http://10.0.0.1:8420', agentUrl: 'http://127.0.0.1:9224', nodeId: 'vm-1', workDir: '/alloc/launcher/local', context: undefined,
    });
  });

  it('is adjusted to the config, and pinned per node with a constraint on the Nomad node id', async () => {
    const config = loadConfig({ NOMAD_LAUNCHER_COMMAND: '/usr/local/bin/node /srv/caravan/launcher.mjs', NOMAD_DATACENTERS: 'dc1, dc2' });
    const job = baseJob(await loadJobFile(), { id: 'cb', namespace: 'browsers', datacenters: config.NOMAD_DATACENTERS!.split(',').map((d) => d.trim()), launcherCommand: parseCommand(config.NOMAD_LAUNCHER_COMMAND)!, chromePath: '/opt/chrome', profileDir: '/dev/shm/caravan' });
    expect(job).toMatchObject({ ID: 'cb', Name: 'cb', Namespace: 'browsers', Datacenters: ['dc1', 'dc2'] });
    expect(task(job as unknown as Json).Config).toEqual({ command: '/usr/local/bin/node', args: ['/srv/caravan/launcher.mjs'] });
    expect(task(job as unknown as Json).Env.CHROME_PATH).toBe('/opt/chrome');
    expect(task(job as unknown as Json).Env.CARAVAN_PROFILE_DIR).toBe('/dev/shm/caravan');
    // Without a path the launcher keeps profiles in its task dir (Nomad removes it with the allocation).
    expect(task(baseJob(await loadJobFile(), { id: 'cb' }) as unknown as Json).Env).not.toHaveProperty('CARAVAN_PROFILE_DIR');
    const pinned = pinnedJob({ ...job, Version: 3, JobModifyIndex: 99, Status: 'running' }, 'vm-1', 'abcd-1234');
    expect(pinned).toMatchObject({ ID: 'cb-vm-1', Name: 'cb-vm-1', Constraints: [{ LTarget: '${node.unique.id}', RTarget: 'abcd-1234', Operand: '=' }], Meta: { caravan_node: 'vm-1' } });
    expect(pinned).not.toHaveProperty('Version');
    expect(pinned).not.toHaveProperty('JobModifyIndex');
  });

  it('names every JSON env and meta key in the HCL too', async () => {
    const [job, hcl] = [await load(), await fs.readFile(HCL, 'utf8')];
    for (const [k, v] of Object.entries(task(job).Env)) expect(hcl, k).toMatch(new RegExp(`${k}\\s*=\\s*"${v.replace(/[$.{}]/g, '\\$&')}"`));
    for (const k of Object.keys(job.Meta)) expect(hcl, k).toMatch(new RegExp(`\\b${k}\\s*=`));
    expect(hcl).toMatch(/kill_timeout\s*=\s*"30s"/);
  });

  it.skipIf(!REAL_NOMAD)('parses (HCL, by the real Nomad) to the job of the JSON', async () => {
    const res = await fetch(`${REAL_NOMAD}/v1/jobs/parse`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(process.env.NOMAD_TOKEN ? { 'X-Nomad-Token': process.env.NOMAD_TOKEN } : {}) },
      body: JSON.stringify({ JobHCL: await fs.readFile(HCL, 'utf8'), Canonicalize: true }),
    });
    expect(res.status).toBe(200);
    const parsed = (await res.json()) as Json;
    const json = await load();
    expect(parsed).toMatchObject({ ID: json.ID, Type: json.Type, Meta: json.Meta, ParameterizedJob: json.ParameterizedJob });
    expect(task(parsed)).toMatchObject({ Env: task(json).Env, Config: task(json).Config, KillTimeout: task(json).KillTimeout, KillSignal: 'SIGTERM' });
    expect(parsed.TaskGroups[0]!.RestartPolicy).toMatchObject({ Attempts: 0, Mode: 'fail' });
    expect(parsed.TaskGroups[0]!.ReschedulePolicy).toMatchObject({ Attempts: 0, Unlimited: false });
  });
});

describe('nomad configuration', () => {
  it('defaults to the local scheduler; SCHEDULER=nomad takes the Nomad variables', () => {
    expect(loadConfig({}).SCHEDULER).toBe('local');
    const c = loadConfig({ SCHEDULER: 'nomad', NOMAD_TOKEN: 'tok', NOMAD_REGION: 'eu', NOMAD_NAMESPACE: 'browsers' });
    expect(c).toMatchObject({
      SCHEDULER: 'nomad', NOMAD_ADDR: 'http://127.0.0.1:4646', NOMAD_TOKEN: 'tok', NOMAD_NAMESPACE: 'browsers', NOMAD_REGION: 'eu',
      NOMAD_JOB_ID: 'caravan-browser-session', NODE_HEARTBEAT_TIMEOUT_MS: 15_000,
    });
    expect(loadConfig({}).NOMAD_NAMESPACE).toBe('default');
  });

  it.each([
    [{ SCHEDULER: 'kubernetes' }, /SCHEDULER/],
    [{ NOMAD_ADDR: 'nomad:4646' }, /NOMAD_ADDR must be a URL/],
    [{ NOMAD_JOB_ID: 'has space' }, /NOMAD_JOB_ID/],
    [{ NODE_HEARTBEAT_TIMEOUT_MS: '0' }, /NODE_HEARTBEAT_TIMEOUT_MS/],
    [{ CARAVAN_CONTROL_URL: 'caravan' }, /CARAVAN_CONTROL_URL must be a URL/],
  ])('refuses %o', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('reads a launcher command line', () => {
    expect(parseCommand('  /usr/bin/node   /opt/caravan/bin/caravan.js launcher ')).toEqual(['/usr/bin/node', '/opt/caravan/bin/caravan.js', 'launcher']);
    expect(parseCommand('  ')).toBeUndefined();
    expect(parseCommand(undefined)).toBeUndefined();
  });
});
