// Runs `caravan serve` as a real child process on free ports against the test database, with a
// bootstrap project and key of its own.
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort, spawnCaravan, type Child } from '../fixtures/processes.ts';
import { resolveProfileRoot } from '../../agent/launcher/profileRoot.ts';
import { testDatabaseUrl } from './db.ts';
import { TEST_SECRET } from './server.ts';
import { waitFor } from './waitFor.ts';

export interface ChildServer {
  url: string;
  child: Child;
  apiKey: string;
  projectId: string;
  dataDir: string;
  /** Where its browsers keep their user-data dirs (/dev/shm on this machine). */
  profilesDir: string;
  stop(): Promise<void>;
}

export async function startChildServer(env: Record<string, string> = {}): Promise<ChildServer> {
  const port = await freePort();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'caravan-child-'));
  const apiKey = `cvn_test_${crypto.randomBytes(16).toString('hex')}`;
  const projectId = `proj_child_${crypto.randomBytes(4).toString('hex')}`;
  const child = spawnCaravan(['serve'], {
    DATABASE_URL: testDatabaseUrl(),
    EVENT_BUS: 'postgres',
    SERVICE_JWT_SIGNING_KEY: TEST_SECRET,
    DASHBOARD_PORT: String(port),
    AGENT_CDP_PORT: '0',
    AGENT_WEBDRIVER_PORT: '0',
    CARAVAN_NODE_ID: `child-${crypto.randomBytes(4).toString('hex')}`,
    CARAVAN_DATA_DIR: dataDir,
    SERVICE_BOOTSTRAP_API_KEY: apiKey,
    SERVICE_BOOTSTRAP_PROJECT_ID: projectId,
    LOG_LEVEL: 'warn',
    ...env,
  });
  const url = `http://127.0.0.1:${port}`;
  // A child that dies during start-up fails the wait at once, with its output.
  const exitedEarly = child.exited.then((e) => {
    throw new Error(`the child server exited (${JSON.stringify(e)}): ${child.output()}`);
  });
  exitedEarly.catch(() => undefined); // it is stopped on purpose later
  // Start-up compiles the TypeScript sources; on a loaded machine that takes a while.
  await Promise.race([
    exitedEarly,
    waitFor(async () => (await fetch(`${url}/v1/projects`, { headers: { 'x-svc-api-key': apiKey } })).ok, {
      timeoutMs: 45_000,
      intervalMs: 100,
      what: 'the child server to answer',
    }),
  ]);
  const profilesDir = (await resolveProfileRoot(env.BROWSER_PROFILE_DIR ?? 'auto', path.join(dataDir, 'browsers'), dataDir)).dir;
  return {
    url, child, apiKey, projectId, dataDir, profilesDir,
    async stop() {
      await child.stop();
      await fs.rm(dataDir, { recursive: true, force: true });
      await fs.rm(profilesDir, { recursive: true, force: true });
    },
  };
}
