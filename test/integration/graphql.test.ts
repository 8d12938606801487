// The operator GraphQL API against a real control plane with DASHBOARD_TOKEN set (so that being
// on loopback is not enough): who may call it, the query limits, and live session events over
// graphql-ws and SSE for a real browser session.
import Browserbase from '@browserbasehq/sdk';
import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { signNodeToken } from '../../server/auth/tokens.ts';
import { startHarness, type Harness } from '../harness/server.ts';
import { ensureSettingsRow } from '../harness/settingsRow.ts';
import { waitFor } from '../harness/waitFor.ts';
import { openSse } from '../runtime/sse.ts';

const TOKEN = 'graphql-dashboard-token-0123456789';
const operator = { 'x-dashboard-token': TOKEN };

let h: Harness;
beforeAll(async () => {
  await ensureSettingsRow();
  h = await startHarness({ env: { DASHBOARD_TOKEN: TOKEN, POOL_SIZE: '0', AGENT_IDLE_GRACE_MS: '60000' } });
});
afterAll(async () => {
  await h?.stop();
});

async function gql(query: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = operator) {
  const res = await fetch(`${h.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query, variables }) });
  return { status: res.status, body: (await res.json()) as { data?: Record<string, unknown> | null; errors?: Array<{ message: string; extensions?: { code?: string } }>; message?: string } };
}

function wsClient(params?: Record<string, unknown>): Client {
  return createClient({ url: `${h.url.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, lazy: false, retryAttempts: 0, ...(params ? { connectionParams: params } : {}) });
}

describe('operator access', () => {
  it('refuses an operator query without credentials, even from loopback', async () => {
    const res = await gql('{ sessions { totalCount } }', {}, {});
    expect(res.status).toBe(401);
    expect(res.body.message).toMatch(/dashboard credentials required/);
  });

  it('refuses a node credential: agents are not operators', async () => {
    const token = await signNodeToken(h.deps.secrets, 'some-node');
    const res = await gql('{ projects { id } }', {}, { authorization: `Bearer ${token}` });
    expect(res.body.data?.projects ?? null).toBeNull();
    expect(res.body.errors?.[0]?.message).toMatch(/operator credentials required/);
    expect(res.body.errors?.[0]?.extensions?.code).toBe('Unauthorized');
  });

  it('answers the dashboard token and the dashboard session cookie', async () => {
    const { projectId } = await h.project();
    const byToken = await gql('{ projects { id name usage { browserMinutes } } }');
    expect(byToken.status).toBe(200);
    expect((byToken.body.data?.projects as Array<{ id: string }>).map((p) => p.id)).toContain(projectId);

    const login = await fetch(`${h.url}/api/auth/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: TOKEN }) });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const byCookie = await gql('{ publicHttps { status host } }', {}, { cookie });
    expect(byCookie.body.data?.publicHttps).toEqual({ status: 'disabled', host: '' });
  });

  it('closes a graphql-ws connection without credentials (4403) and accepts the token in connection_init', async () => {
    const refused = wsClient();
    const code = await new Promise<number>((resolve) => refused.on('closed', (e) => resolve((e as { code: number }).code)));
    expect(code).toBe(4403);
    await refused.dispose();

    const ok = wsClient({ dashboardToken: TOKEN });
    const result = await new Promise<unknown>((resolve, reject) => {
      ok.subscribe({ query: '{ settings { _meta { updatedAt } } }' }, { next: resolve, error: reject, complete: () => undefined });
    });
    expect((result as { data: { settings: { _meta: { updatedAt: string } } } }).data.settings._meta.updatedAt).toMatch(/^\d{4}-/);
    await ok.dispose();
  });
});

describe('query limits', () => {
  it('refuses an over-deep query with a clear error, before running it', async () => {
    const deep = '{ sessions { nodes { project { sessions { nodes { project { sessions { nodes { id } } } } } } } } }';
    const res = await gql(deep);
    expect(res.body.data ?? null).toBeNull();
    expect(res.body.errors?.[0]?.message).toMatch(/Query depth limit of 8 exceeded, found 9/);
  });

  it('refuses a query with too many aliases', async () => {
    const aliases = Array.from({ length: 20 }, (_v, i) => `a${i}: publicHttps { status }`).join(' ');
    const res = await gql(`{ ${aliases} }`);
    expect(res.body.errors?.[0]?.message).toMatch(/Aliases limit of 15 exceeded/);
  });
});

describe('live session events', () => {
  it('streams READY and COMPLETED of a real session over graphql-ws and SSE', async () => {
    const { projectId, apiKey } = await h.project();
    const query = 'subscription ($p: String) { sessionEvents(projectId: $p) { sessionId to status reason } }';
    type Ev = { sessionId: string; to: string; status: string; reason: string | null };

    const viaWs: Ev[] = [];
    const ws = wsClient({ dashboardToken: TOKEN });
    const connected = new Promise((resolve) => ws.on('connected', resolve));
    const stopWs = ws.subscribe<{ sessionEvents: Ev }>({ query, variables: { p: projectId } }, {
      next: (r) => r.data && viaWs.push(r.data.sessionEvents), error: () => undefined, complete: () => undefined,
    });
    await connected;
    const sse = await openSse(`${h.url}/graphql?query=${encodeURIComponent(query)}&variables=${encodeURIComponent(JSON.stringify({ p: projectId }))}`, operator);
    expect(sse.status).toBe(200);

    const bb = new Browserbase({ apiKey: 'unused', baseURL: h.url, maxRetries: 0, defaultHeaders: { 'x-svc-api-key': apiKey } });
    const s = await bb.sessions.create({ projectId, keepAlive: true, userMetadata: { userId: 'u-graphql' } });
    await waitFor(() => viaWs.some((e) => e.sessionId === s.id && e.to === 'READY'), { what: 'READY over graphql-ws' });
    await bb.sessions.update(s.id, { projectId, status: 'REQUEST_RELEASE' });
    await waitFor(() => viaWs.some((e) => e.sessionId === s.id && e.status === 'COMPLETED'), { what: 'COMPLETED over graphql-ws' });
    expect(viaWs.map((e) => e.to)).toEqual(['CREATING', 'PROVISIONING', 'READY', 'STOPPED'].filter((t) => viaWs.some((e) => e.to === t)));
    expect(viaWs.find((e) => e.to === 'STOPPED')).toMatchObject({ status: 'COMPLETED', reason: 'RELEASED' });

    const ready = await sse.waitFor((e) => e.event === 'next' && e.data.includes('"READY"'), 5_000);
    expect(JSON.parse(ready.data).data.sessionEvents).toMatchObject({ sessionId: s.id, to: 'READY', status: 'RUNNING' });
    const done = await sse.waitFor((e) => e.event === 'next' && e.data.includes('"COMPLETED"'), 5_000);
    expect(JSON.parse(done.data).data.sessionEvents).toMatchObject({ sessionId: s.id, to: 'STOPPED' });
    sse.close();
    stopWs();
    await ws.dispose();

    // The session's own record: ordered change events, filters and paging.
    const detail = await gql('query ($id: ID!) { session(id: $id) { status live userMetadata events { to } } }', { id: s.id });
    expect(detail.body.data?.session).toEqual({
      status: 'COMPLETED', live: false, userMetadata: { userId: 'u-graphql' },
      events: [{ to: 'CREATING' }, { to: 'PROVISIONING' }, { to: 'READY' }, { to: 'STOPPED' }],
    });
    const found = await gql('query ($f: SessionFilter) { sessions(filter: $f, first: 1) { totalCount nodes { id } pageInfo { hasNextPage } } }', { f: { projectId, status: 'COMPLETED', metadata: { userId: 'u-graphql' } } });
    expect(found.body.data?.sessions).toEqual({ totalCount: 1, nodes: [{ id: s.id }], pageInfo: { hasNextPage: false } });

    // Usage over time adds up to the project's usage; buckets without sessions are empty.
    const usage = await gql('query ($id: ID!) { project(id: $id) { usage { browserMinutes } usageSeries(granularity: HOUR, buckets: 48) { at browserMinutes } } }', { id: projectId });
    const project = usage.body.data?.project as { usage: { browserMinutes: number }; usageSeries: Array<{ at: string; browserMinutes: number }> };
    expect(project.usageSeries).toHaveLength(48);
    expect(project.usage.browserMinutes).toBeGreaterThan(0);
    const sum = project.usageSeries.reduce((a, p) => a + p.browserMinutes, 0);
    expect(Math.abs(sum - project.usage.browserMinutes)).toBeLessThan(0.01);
    expect(project.usageSeries.filter((p) => p.browserMinutes > 0).length).toBeLessThanOrEqual(2);
  });
});
