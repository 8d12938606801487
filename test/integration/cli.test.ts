// The `caravan` operator CLI against a running control plane: projects and API keys, each
// command printing one JSON object, and keys that work (and stop working) on /v1.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportingScheduler } from '../harness/reportingScheduler.ts';
import { startHarness, type Harness } from '../harness/server.ts';
import { baseEnv, CARAVAN_BIN, ROOT } from '../fixtures/processes.ts';

const exec = promisify(execFile);
let h: Harness;

beforeAll(async () => {
  h = await startHarness({ scheduler: (deps) => reportingScheduler({ deps }) });
});
afterAll(() => h?.stop());

/** Runs the CLI and parses the one JSON object it prints. */
async function caravan(...args: string[]): Promise<{ json: any; stdout: string }> {
  // No DASHBOARD_TOKEN in the environment: the harness allows loopback operators.
  const { stdout } = await exec(process.execPath, [CARAVAN_BIN, ...args, '--url', h.url], { cwd: ROOT, env: baseEnv(), timeout: 30_000 });
  const lines = stdout.trim().split('\n');
  expect(lines, stdout).toHaveLength(1);
  return { json: JSON.parse(lines[0]!), stdout };
}

async function caravanFails(...args: string[]): Promise<{ code: number; stderr: string; stdout: string }> {
  try {
    await exec(process.execPath, [CARAVAN_BIN, ...args], { cwd: ROOT, env: baseEnv(), timeout: 30_000 });
  } catch (err) {
    const e = err as { code: number; stderr: string; stdout: string };
    return { code: e.code, stderr: e.stderr, stdout: e.stdout };
  }
  throw new Error(`caravan ${args.join(' ')} succeeded`);
}

const projectsWith = (key: string) => fetch(`${h.url}/v1/projects`, { headers: { 'x-svc-api-key': key } });

// Each CLI run starts a node process that loads the server sources (1-2 s, much more while
// browser tests share the machine); the cases run side by side.
describe.concurrent('caravan CLI', { timeout: 120_000 }, () => {
  it('creates projects and a key for two of them, lists them, and revokes the key', async () => {
    const name = `cli ${Date.now()}`;
    const [{ json: p1 }, { json: p2 }] = await Promise.all([
      caravan('project', 'create', '--name', name, '--concurrency', '3'),
      caravan('project', 'create', '--name', `${name} b`, '--default-timeout', '600'),
    ]);
    expect(p1.id).toMatch(/^proj_/);
    expect(p1).toMatchObject({ name, concurrency: 3, defaultTimeout: 3600 });
    expect(p2).toMatchObject({ name: `${name} b`, concurrency: 25, defaultTimeout: 600 });
    expect(await h.deps.db.project.findUnique({ where: { id: p1.id } })).toMatchObject({ name, concurrency: 3 });

    const [{ json: listed }, { json: created }] = await Promise.all([
      caravan('project', 'list'),
      caravan('apikey', 'create', '--project', p1.id, '--project', p2.id),
    ]);
    expect(listed.projects.map((p: { id: string }) => p.id)).toEqual(expect.arrayContaining([p1.id, p2.id]));
    expect(created.key).toMatch(/^cvn_[A-Za-z0-9_-]{20,}$/);
    expect(created.id).toMatch(/^key_/);
    expect(created.projectIds).toEqual([p1.id, p2.id]);

    const res = await projectsWith(created.key);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: Array<{ id: string; concurrency: number }> };
    expect(body.data.map((p) => p.id).sort()).toEqual([p1.id, p2.id].sort());
    expect(body.data.find((p) => p.id === p1.id)!.concurrency).toBe(3);

    const { json: keys, stdout: keysOut } = await caravan('apikey', 'list');
    const entry = keys.keys.find((k: { id: string }) => k.id === created.id);
    expect(entry).toMatchObject({ id: created.id, revokedAt: null, projectIds: expect.arrayContaining([p1.id, p2.id]) });
    expect(entry.prefix.length).toBeGreaterThanOrEqual(4);
    expect(entry.prefix).toBe(created.key.slice(0, entry.prefix.length));
    // The key itself is shown once, at creation, and never again.
    expect(keysOut).not.toContain(created.key);
    expect(keysOut).not.toContain(created.key.slice(8));

    const { json: revoked } = await caravan('apikey', 'revoke', created.id);
    expect(revoked).toEqual({ id: created.id, revoked: true });
    const after = await projectsWith(created.key);
    expect(after.status).toBe(401);
    expect(await after.json()).toEqual({ success: false, message: expect.stringMatching(/revoked/) });
    expect((await h.deps.db.apiKey.findUniqueOrThrow({ where: { id: created.id } })).revokedAt).toBeInstanceOf(Date);
  });

  it('refuses a concurrency that is not a whole number, with a message and a non-zero exit', async () => {
    const r = await caravanFails('project', 'create', '--name', 'bad', '--concurrency', 'abc', '--url', h.url);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/--concurrency must be a positive whole number/);
    expect(r.stdout).toBe('');
    expect(await h.deps.db.project.count({ where: { name: 'bad' } })).toBe(0);
  });

  it('exits non-zero with the server\'s reason when a key names an unknown project', async () => {
    const r = await caravanFails('apikey', 'create', '--project', 'proj_does-not-exist', '--url', h.url);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/caravan: .*project proj_does-not-exist not found/);
    expect(r.stdout).toBe('');
  });
});
