// `npm start` on a fresh machine: no DATABASE_URL, so Caravan runs its embedded PostgreSQL
// under the data dir, creates the bootstrap project and key, keeps its generated JWT secret
// private, and leaves no PostgreSQL behind when it is stopped.
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '../harness/waitFor.ts';
import { freePort, spawnCaravan, type Child } from '../fixtures/processes.ts';

const run = promisify(execFile);
let child: Child | undefined;
let parentDir = '';
let dataDir = '';

/** Processes whose command line names the data dir (embedded PostgreSQL runs from there). */
async function processesUsing(dir: string): Promise<string[]> {
  try {
    const { stdout } = await run('pgrep', ['-a', '-f', dir]);
    return stdout.trim().split('\n').filter(Boolean);
  } catch (err) {
    if ((err as { code?: number }).code === 1) return []; // pgrep: nothing matched
    throw err;
  }
}

afterAll(async () => {
  await child?.stop(5_000);
  // Never leave a cluster behind, even when the test failed half way.
  for (const line of dataDir ? await processesUsing(dataDir) : []) {
    const pid = Number(line.split(' ')[0]);
    if (pid && pid !== process.pid) process.kill(pid, 'SIGKILL');
  }
  if (parentDir) await fs.rm(parentDir, { recursive: true, force: true });
});

describe('embedded PostgreSQL', () => {
  it('serves the bootstrap project on a fresh data dir with no DATABASE_URL and stops cleanly on SIGTERM', async () => {
    // A data dir that does not exist yet, as on a fresh machine: Caravan creates it. Its
    // parent is world-traversable like /var/lib (mkdtemp makes 0700 directories, which the
    // `postgres` user that runs the cluster under root could not enter).
    parentDir = await fs.mkdtemp(path.join(os.tmpdir(), 'caravan-embedded-'));
    await fs.chmod(parentDir, 0o755);
    dataDir = path.join(parentDir, 'data');
    const port = await freePort();
    const apiKey = crypto.randomBytes(24).toString('base64url').slice(0, 32);
    const url = `http://127.0.0.1:${port}`;
    child = spawnCaravan(['serve'], {
      CARAVAN_DATA_DIR: dataDir,
      DASHBOARD_PORT: String(port),
      AGENT_CDP_PORT: '0',
      AGENT_WEBDRIVER_PORT: '0',
      CARAVAN_NODE_ID: `embedded-${crypto.randomUUID().slice(0, 8)}`,
      SERVICE_BOOTSTRAP_API_KEY: apiKey,
      SERVICE_BOOTSTRAP_PROJECT_ID: 'default',
      LOG_LEVEL: 'warn',
    });
    const c = child;

    const exitedEarly = c.exited.then((e) => {
      throw new Error(`caravan exited (${JSON.stringify(e)}): ${c.output()}`);
    });
    const answered = waitFor(
      async () => {
        const res = await fetch(`${url}/v1/projects`, { headers: { 'x-svc-api-key': apiKey } });
        return res.status === 200 ? ((await res.json()) as { success: boolean; data: Array<Record<string, unknown>> }) : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200, what: 'the embedded server to answer GET /v1/projects' },
    );
    const projects = await Promise.race([answered, exitedEarly]);
    exitedEarly.catch(() => undefined); // the clean exit at the end is expected
    expect(projects.success).toBe(true);
    expect(projects.data).toEqual([{ id: 'default', name: 'default', defaultTimeout: 3600, concurrency: 25 }]);
    // The cluster lives under the data dir.
    expect((await fs.stat(path.join(dataDir, 'postgres', 'data', 'PG_VERSION'))).isFile()).toBe(true);
    expect(await processesUsing(dataDir)).not.toEqual([]);

    // The JWT secret is generated on first use; a launcher-style bearer token makes the
    // control plane read it.
    await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer not.a.token' },
      body: JSON.stringify({ query: '{ health }' }),
    });
    const secretFile = path.join(dataDir, 'jwt-secret');
    const stat = await waitFor(() => fs.stat(secretFile), { what: 'the generated JWT secret file' });
    expect(stat.mode & 0o777).toBe(0o600);
    expect((await fs.readFile(secretFile, 'utf8')).trim().length).toBeGreaterThanOrEqual(32);

    const exit = await c.stop(20_000);
    expect(exit, c.output()).toEqual({ code: 0, signal: null });
    expect(c.output()).toMatch(/SIGTERM, shutting down/);
    expect(await processesUsing(dataDir)).toEqual([]);
  });
});
