// Two control-plane processes on one database: a READY reported to one replica completes the
// create waiting on the other, through PostgreSQL LISTEN/NOTIFY.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { ensureApiKey, hashKey } from '../../server/auth/apiKeys.ts';
import { createDb } from '../../server/db/client.ts';
import { ensureProject } from '../../server/projects/projects.ts';
import { testDatabaseUrl } from '../harness/db.ts';
import { reportingScheduler, type ReportingScheduler } from '../harness/reportingScheduler.ts';
import { startHarness, type Harness } from '../harness/server.ts';
import { startChildServer, type ChildServer } from '../harness/child.ts';

let a: Harness;
let schedA: ReportingScheduler;
let b: ChildServer;
let bUrl = '';
let reportsSentTo: string[] = [];

beforeAll(async () => {
  b = await startChildServer({ CARAVAN_NODE_ID: `replica-b-${crypto.randomUUID().slice(0, 8)}` });
  bUrl = b.url;
  a = await startHarness({
    scheduler: (deps) =>
      (schedA = reportingScheduler({
        deps,
        reportTo: () => {
          reportsSentTo.push(bUrl);
          return bUrl;
        },
      })),
    env: { SERVICE_READY_WAIT_MS: '10000' },
  });
});

afterAll(async () => {
  await b?.stop();
  await a?.stop();
});

describe('two replicas on one database', () => {
  it('completes a create waiting on replica A when the READY is reported to replica B', async () => {
    expect(a.url).not.toBe(bUrl);
    const { projectId, apiKey } = await a.project();
    reportsSentTo = [];
    const res = await fetch(`${a.url}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-api-key': apiKey },
      body: JSON.stringify({ projectId }),
    });
    const body = (await res.json()) as Record<string, string>;
    expect(res.status, JSON.stringify(body)).toBe(201);
    expect(body.status).toBe('RUNNING');
    expect(body.connectUrl).toBe(`ws://127.0.0.1:9?signingKey=${body.signingKey}`);
    // The report went to B, and only to B.
    expect(reportsSentTo).toEqual([bUrl]);
    expect(schedA.started.map((s) => s.sessionId)).toContain(body.id);

    const events = await a.deps.db.sessionEvent.findMany({ where: { sessionId: body.id }, orderBy: { seq: 'asc' } });
    expect(events.map((e) => e.to)).toEqual(['CREATING', 'PROVISIONING', 'READY']);

    // B serves the same session from the shared database.
    const onB = await fetch(`${bUrl}/v1/sessions/${body.id}`, { headers: { 'x-svc-api-key': apiKey } });
    expect(onB.status).toBe(200);
    const viewB = (await onB.json()) as { data: Record<string, string> };
    expect(viewB.data.status).toBe('RUNNING');
    expect(viewB.data.signingKey).toBe(body.signingKey);
  });

  it('lets a release on replica B end a session created on replica A', async () => {
    const { projectId, apiKey } = await a.project();
    const created = await fetch(`${a.url}/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-svc-api-key': apiKey }, body: '{}' });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const released = await fetch(`${bUrl}/v1/sessions/${id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-api-key': apiKey },
      body: JSON.stringify({ projectId, status: 'REQUEST_RELEASE' }),
    });
    expect(released.status).toBe(200);
    const onA = (await (await fetch(`${a.url}/v1/sessions/${id}`, { headers: { 'x-svc-api-key': apiKey } })).json()) as { data: { status: string } };
    expect(onA.data.status).toBe('COMPLETED');
  });

  it('lets replicas that start together bootstrap the same project and key without failing', async () => {
    // What SERVICE_BOOTSTRAP_* (and the first-start key) do at start-up, from several
    // processes' database clients at the same moment.
    const clients = Array.from({ length: 4 }, () => createDb(testDatabaseUrl(), pino({ level: 'silent' })));
    try {
      const projectId = `boot-${crypto.randomUUID().slice(0, 8)}`;
      const key = `cvn_${crypto.randomBytes(24).toString('base64url')}`;
      const starts = await Promise.allSettled(
        [...clients, ...clients].map(async ({ db }) => {
          await ensureProject(db, projectId);
          await ensureApiKey(db, key, projectId);
        }),
      );
      expect(starts.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
      expect(await a.deps.db.project.count({ where: { id: projectId } })).toBe(1);
      const stored = await a.deps.db.apiKey.findMany({ where: { hash: hashKey(key) }, include: { projects: true } });
      expect(stored).toHaveLength(1);
      expect(stored[0]!.projects.map((p) => p.projectId)).toEqual([projectId]);
      const res = await fetch(`${a.url}/v1/projects/${projectId}`, { headers: { 'x-svc-api-key': key } });
      expect(res.status).toBe(200);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it('shuts replica B down cleanly on SIGTERM while replica A keeps serving', async () => {
    const exit = await b.child.stop(5_000);
    expect(exit, b.child.output()).toEqual({ code: 0, signal: null });
    expect(b.child.output()).toMatch(/SIGTERM, shutting down/);
    const { apiKey } = await a.project();
    expect((await fetch(`${a.url}/v1/projects`, { headers: { 'x-svc-api-key': apiKey } })).status).toBe(200);
  });
});
