// Starts a real control plane in this process on free ports against the test database, with
// either the real local scheduler (real Chromium) or a stand-in scheduler from test/.
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { createApiKey } from '../../server/auth/apiKeys.ts';
import { loadConfig } from '../../server/config.ts';
import type { Clock, Deps } from '../../server/deps.ts';
import { createServer, type CaravanServer, type ServerOptions } from '../../server/main.ts';
import { createProject } from '../../server/projects/projects.ts';
import { testDatabaseUrl } from './db.ts';
import { resolveProfileRoot } from '../../agent/launcher/profileRoot.ts';

export const TEST_SECRET = 'test-secret-0123456789-0123456789-abcdef';

export interface Harness {
  server: CaravanServer;
  url: string;
  deps: Deps;
  dataDir: string;
  /** Where this node's browsers keep their user-data dirs (BROWSER_PROFILE_DIR resolved: /dev/shm on this machine). */
  profilesDir: string;
  /** A new project with its own API key. */
  project(opts?: { concurrency?: number; defaultTimeout?: number }): Promise<{ projectId: string; apiKey: string }>;
  stop(): Promise<void>;
}

export async function startHarness(opts: {
  env?: Record<string, string>;
  scheduler?: ServerOptions['scheduler'];
  clock?: Clock;
  /** Replaceable parts of the operator runtime (an mDNS advertiser, tunnel timers). */
  runtime?: ServerOptions['runtime'];
  /** An existing data dir (default: a new temp dir); removed by stop() either way. */
  dataDir?: string;
} = {}): Promise<Harness> {
  const dataDir = opts.dataDir ?? await fs.mkdtemp(path.join(os.tmpdir(), 'caravan-test-'));
  const config = loadConfig({
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATABASE_URL: testDatabaseUrl(),
    EVENT_BUS: 'postgres',
    CARAVAN_DATA_DIR: dataDir,
    DASHBOARD_PORT: '0',
    AGENT_CDP_PORT: '0',
    AGENT_WEBDRIVER_PORT: '0',
    CARAVAN_NODE_ID: `test-${crypto.randomUUID().slice(0, 8)}`,
    SERVICE_JWT_SIGNING_KEY: TEST_SECRET,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'error',
    ...opts.env,
  });
  const server = createServer({
    config,
    log: pino({ level: config.LOG_LEVEL }),
    ...(opts.scheduler ? { scheduler: opts.scheduler } : {}),
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.runtime ? { runtime: opts.runtime } : {}),
  });
  await server.start();
  const deps = server.deps();
  const profilesDir = (await resolveProfileRoot(config.BROWSER_PROFILE_DIR, path.join(config.dataDir, 'browsers'), config.dataDir)).dir;
  return {
    server,
    url: server.address().url,
    deps,
    dataDir,
    profilesDir,
    async project(p = {}) {
      const project = await createProject(deps.db, { name: `test ${crypto.randomUUID().slice(0, 6)}`, ...p });
      const key = await createApiKey(deps.db, [project.id]);
      return { projectId: project.id, apiKey: key.key };
    },
    async stop() {
      await server.stop();
      await fs.rm(dataDir, { recursive: true, force: true });
      // This data dir's own (/dev/shm/caravan-<hash of it>): nothing else uses it.
      await fs.rm(profilesDir, { recursive: true, force: true });
    },
  };
}
