// Starts a control plane like test/harness/server.ts does, with the operator runtime's parts
// replaceable (a recording mDNS advertiser, so that no test ever multicasts; short tunnel timers).
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { createApiKey } from '../../server/auth/apiKeys.ts';
import { loadConfig } from '../../server/config.ts';
import type { Clock } from '../../server/deps.ts';
import { createServer, type ServerOptions } from '../../server/main.ts';
import { createProject } from '../../server/projects/projects.ts';
import { recordingAdvertiser } from '../../server/runtime/publicHttps/advertise.ts';
import type { RuntimeOptions } from '../../server/runtime/runtime.ts';
import { testDatabaseUrl } from '../harness/db.ts';
import { reportingScheduler } from '../harness/reportingScheduler.ts';
import { TEST_SECRET, type Harness } from '../harness/server.ts';

export const DASHBOARD_TOKEN = 'dashboard-token-0123456789';
export const PUBLIC_API_TOKEN = 'public-api-token-0123456789';
export const FAKE_TUNNEL = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/fake-cloudflared.cjs');

export interface RuntimeHarness extends Harness {
  advertiser: ReturnType<typeof recordingAdvertiser>;
}

/** A control plane with the stand-in (reporting) scheduler unless `realBrowsers` is set. */
export async function startRuntimeHarness(opts: { env?: Record<string, string>; runtime?: RuntimeOptions; clock?: Clock; scheduler?: ServerOptions['scheduler'] } = {}): Promise<RuntimeHarness> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'caravan-rt-'));
  const config = loadConfig({
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATABASE_URL: testDatabaseUrl(),
    EVENT_BUS: 'postgres',
    CARAVAN_DATA_DIR: dataDir,
    DASHBOARD_PORT: '0',
    CARAVAN_NODE_ID: `test-${crypto.randomUUID().slice(0, 8)}`,
    SERVICE_JWT_SIGNING_KEY: TEST_SECRET,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...opts.env,
  });
  const advertiser = recordingAdvertiser();
  const server = createServer({
    config,
    log: pino({ level: config.LOG_LEVEL }),
    scheduler: opts.scheduler ?? ((deps) => reportingScheduler({ deps })),
    runtime: { advertiser, tunnelRetryMs: 100, tunnelKillAfterMs: 500, ...opts.runtime },
    ...(opts.clock ? { clock: opts.clock } : {}),
  });
  await server.start();
  const deps = server.deps();
  return {
    server,
    url: server.address().url,
    deps,
    dataDir,
    advertiser,
    async project(p = {}) {
      const project = await createProject(deps.db, { name: `test ${crypto.randomUUID().slice(0, 6)}`, ...p });
      const key = await createApiKey(deps.db, [project.id]);
      return { projectId: project.id, apiKey: key.key };
    },
    async stop() {
      await server.stop();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Creates a session through /v1 and waits until it is READY (the stand-in reports at once). */
export async function readySession(h: Harness, opts: { timeout?: number; keepAlive?: boolean } = {}): Promise<{ id: string; connectUrl: string; apiKey: string; projectId: string }> {
  const { apiKey, projectId } = await h.project({ concurrency: 50 });
  const res = await fetch(`${h.url}/v1/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc-api-key': apiKey },
    body: JSON.stringify({ keepAlive: opts.keepAlive ?? true, timeout: opts.timeout ?? 3600 }),
  });
  if (res.status !== 201) throw new Error(`create answered ${res.status}: ${await res.text()}`);
  const body = (await res.json()) as { id: string; connectUrl: string };
  return { id: body.id, connectUrl: body.connectUrl, apiKey, projectId };
}

export const operator = { 'x-dashboard-token': DASHBOARD_TOKEN };
