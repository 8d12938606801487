// Starts a control plane like test/harness/server.ts does, with the operator runtime's parts
// replaceable (a recording mDNS advertiser, so that no test ever multicasts; short tunnel timers).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Clock } from '../../server/deps.ts';
import { recordingAdvertiser } from '../../server/runtime/publicHttps/advertise.ts';
import type { RuntimeOptions } from '../../server/runtime/runtime.ts';
import { reportingScheduler } from '../harness/reportingScheduler.ts';
import { startHarness, type Harness } from '../harness/server.ts';
import type { ServerOptions } from '../../server/main.ts';

export const DASHBOARD_TOKEN = 'dashboard-token-0123456789';
export const PUBLIC_API_TOKEN = 'public-api-token-0123456789';
export const FAKE_TUNNEL = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/fake-cloudflared.cjs');

export interface RuntimeHarness extends Harness {
  advertiser: ReturnType<typeof recordingAdvertiser>;
}

/** A control plane with the stand-in (reporting) scheduler unless another is given. */
export async function startRuntimeHarness(opts: { env?: Record<string, string>; runtime?: RuntimeOptions; clock?: Clock; scheduler?: ServerOptions['scheduler'] } = {}): Promise<RuntimeHarness> {
  const advertiser = recordingAdvertiser();
  const h = await startHarness({
    env: { LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', ...opts.env },
    scheduler: opts.scheduler ?? ((deps) => reportingScheduler({ deps })),
    runtime: { advertiser, tunnelRetryMs: 100, tunnelKillAfterMs: 500, ...opts.runtime },
    ...(opts.clock ? { clock: opts.clock } : {}),
  });
  return { ...h, advertiser };
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
