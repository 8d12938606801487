// Access rules of the operator runtime with the public entrypoint up (stand-in tunnel): what the
// tunnel host exposes with and without each credential, the local login and its cookie, the
// header-token ingest, and the limits of the public frame routes.
import http from 'node:http';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PublicHttpsState } from '../../schema/runtime.ts';
import { loadConfig } from '../../server/config.ts';
import { restRoutes } from '../../server/rest/index.ts';
import { runtimeRoutes } from '../../server/runtime/routes/index.ts';
import { waitFor } from '../harness/waitFor.ts';
import { DASHBOARD_TOKEN, FAKE_TUNNEL, PUBLIC_API_TOKEN, operator, readySession, startRuntimeHarness, type RuntimeHarness } from './harness.ts';

let h: RuntimeHarness;
let tunnelHost: string;
let sessionId: string;
let port: number;

const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1, 0xff, 0xd9]);
const PUBLIC = new Set(['POST /api/voice/stream-ingest/frame', 'POST /api/voice/share-session/:token/frame', 'POST /api/voice/share-session/:token/stop', 'GET /share/:token', 'GET /share/:token/frames']);

beforeAll(async () => {
  h = await startRuntimeHarness({ env: { PUBLIC_HTTPS_ENABLED: 'true', PUBLIC_HTTPS_TUNNEL_BIN: FAKE_TUNNEL, DASHBOARD_TOKEN, PUBLIC_API_TOKEN } });
  port = h.server.address().port;
  const state = await waitFor(async () => {
    const s = (await (await fetch(`${h.url}/api/public-https`, { headers: operator })).json()) as PublicHttpsState;
    return s.status === 'ready' ? s : undefined;
  }, { what: 'tunnel ready' });
  tunnelHost = new URL(state.publicUrl).host;
  sessionId = (await readySession(h)).id;
});
afterAll(async () => h?.stop());

async function share(): Promise<string> {
  const res = await fetch(`${h.url}/api/sessions/${sessionId}/share`, { method: 'POST', headers: { ...operator, 'content-type': 'application/json' }, body: '{}' });
  expect(res.status).toBe(201);
  return ((await res.json()) as { token: string }).token;
}

async function login(): Promise<string> {
  const res = await fetch(`${h.url}/api/auth/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: DASHBOARD_TOKEN }) });
  expect(res.status).toBe(200);
  return res.headers.get('set-cookie')!.split(';')[0]!;
}

/** Status and message of one request; event streams are cancelled once their head arrived. */
async function call(method: string, path: string, headers: Record<string, string>): Promise<{ status: number; message: string }> {
  const frame = path.endsWith('/frame');
  const init: RequestInit = { method, headers: { ...headers, ...(method === 'GET' ? {} : { 'content-type': frame ? 'image/jpeg' : 'application/json' }) } };
  if (method !== 'GET') init.body = frame ? new Uint8Array(JPEG) : path === '/graphql' ? '{"query":"{ __typename }"}' : '{}';
  const res = await fetch(`${h.url}${path}`, init);
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    await res.body?.cancel();
    return { status: res.status, message: '' };
  }
  const text = await res.text();
  let message = '';
  try {
    message = (JSON.parse(text) as { message?: string }).message ?? '';
  } catch {
    // HTML or tRPC bodies
  }
  return { status: res.status, message };
}

/** Host header is forbidden in fetch: requests for the tunnel host go through node:http. */
async function callHost(host: string, method: string, path: string, headers: Record<string, string>): Promise<{ status: number; message: string }> {
  const frame = path.split('?')[0]!.endsWith('/frame');
  const body = method === 'GET' ? undefined : frame ? JPEG : Buffer.from(path === '/graphql' ? '{"query":"{ __typename }"}' : '{}');
  const req = http.request({ host: '127.0.0.1', port, method, path, headers: { ...headers, host, ...(body ? { 'content-type': frame ? 'image/jpeg' : 'application/json', 'content-length': String(body.length) } : {}) } });
  req.end(body);
  const [res] = (await once(req, 'response')) as [http.IncomingMessage];
  if ((res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
    res.destroy();
    return { status: res.statusCode ?? 0, message: '' };
  }
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  let message = '';
  try {
    message = (JSON.parse(Buffer.concat(chunks).toString()) as { message?: string }).message ?? '';
  } catch {
    // not JSON
  }
  return { status: res.statusCode ?? 0, message };
}

/** Every route of the listener, as [method, route pattern]. */
function allRoutes(): Array<[string, string]> {
  return [
    ...restRoutes.map((r): [string, string] => [r.method, r.url]),
    ...runtimeRoutes.map((r): [string, string] => [r.method, r.url]),
    ['GET', '/graphql'], ['POST', '/graphql'],
    ['GET', '/trpc/project.list'],
    ['GET', '/'], ['GET', '/index.html'], ['GET', '/assets/app.js'], ['GET', '/share'],
  ];
}

const blocked = (r: { status: number; message: string }) => r.status === 404 && r.message.startsWith('no route ');

describe('requests on the tunnel host', () => {
  it('reach only the public routes, unless they carry the dashboard token (then API routes, never UI or login)', async () => {
    const cookie = await login();
    const [tokenA, tokenStop] = [await share(), await share()];
    const credentials: Record<string, Record<string, string>> = {
      none: {},
      'public api token': { 'x-public-api-token': PUBLIC_API_TOKEN },
      'wrong dashboard token': { 'x-dashboard-token': 'not-the-dashboard-token' },
      'session cookie': { cookie },
      'dashboard token': operator,
    };
    const outcomes: string[] = [];
    const expected: string[] = [];
    for (const [cred, headers] of Object.entries(credentials)) {
      for (const [method, pattern] of allRoutes()) {
        const path = pattern.replace(':id', sessionId).replace(':token', pattern.endsWith('/stop') ? tokenStop : tokenA);
        const r = await callHost(tunnelHost, method, path, headers);
        const key = `${method} ${pattern}`;
        const api = /^\/(v1|sessions|api|graphql|trpc)(\/|$)/.test(pattern) && pattern !== '/api/auth/session';
        const pass = PUBLIC.has(key) || (cred === 'dashboard token' && api);
        outcomes.push(`${cred}: ${key} -> ${blocked(r) ? 'blocked' : 'passes'}`);
        expected.push(`${cred}: ${key} -> ${pass ? 'passes' : 'blocked'}`);
      }
    }
    expect(outcomes).toEqual(expected);
    expect(outcomes.length).toBeGreaterThan(200);
  });

  it('answers a blocked route exactly like a route that does not exist', async () => {
    const real = await callHost(tunnelHost, 'GET', '/api/settings', {});
    const none = await callHost(tunnelHost, 'GET', '/api/no-such-route', {});
    expect(real).toEqual({ status: 404, message: 'no route GET /api/settings' });
    expect(none).toEqual({ status: 404, message: 'no route GET /api/no-such-route' });
  });

  it('treats any quick-tunnel host, and Cloudflare-forwarded requests, as tunnel traffic', async () => {
    expect(blocked(await callHost('other-name.trycloudflare.com', 'GET', '/api/settings', {}))).toBe(true);
    expect(blocked(await callHost(`127.0.0.1:${port}`, 'GET', '/api/settings', { 'cf-connecting-ip': '203.0.113.9', ...operator }))).toBe(false);
    expect(blocked(await callHost(`127.0.0.1:${port}`, 'GET', '/api/settings', { 'cf-ray': 'abc', cookie: await login() }))).toBe(true);
  });
});

describe('local requests', () => {
  it('need the cookie or the dashboard token on admin and UI routes only', async () => {
    const cookie = await login();
    const token = await share();
    const needs = (r: { status: number; message: string }) => r.status === 401 && r.message.startsWith('dashboard credentials required');
    const outcomes: string[] = [];
    const expected: string[] = [];
    for (const [method, pattern] of allRoutes()) {
      if (pattern.endsWith('/stop')) continue;
      const path = pattern.replace(':id', sessionId).replace(':token', token);
      const key = `${method} ${pattern}`;
      const admin = !PUBLIC.has(key) && !/^\/(v1|sessions)\//.test(pattern) && pattern !== '/api/auth/session';
      const anon = await call(method, path, {});
      outcomes.push(`${key}: ${needs(anon) ? 'needs login' : 'open'}`);
      expected.push(`${key}: ${admin ? 'needs login' : 'open'}`);
      if (admin) {
        expect(needs(await call(method, path, { cookie })), `${key} with cookie`).toBe(false);
        expect(needs(await call(method, path, operator)), `${key} with token`).toBe(false);
      }
    }
    expect(outcomes).toEqual(expected);
  });

  it('give a browser without a session a login page instead of the dashboard', async () => {
    const res = await fetch(`${h.url}/`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(await res.text()).toContain('/api/auth/session');
  });
});

describe('POST /api/auth/session', () => {
  it('mints an HttpOnly, signed, SameSite=Strict cookie for 12 hours', async () => {
    const res = await fetch(`${h.url}/api/auth/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: DASHBOARD_TOKEN }) });
    expect(res.status).toBe(200);
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^caravan_dashboard=\d+\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{43}; /);
    expect(cookie).toContain('Path=/');
    expect(cookie).toContain('Max-Age=43200');
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    expect(cookie).not.toContain('Secure'); // plain http
    expect(cookie).not.toContain(DASHBOARD_TOKEN);
    const value = cookie.split(';')[0]!;
    expect((await fetch(`${h.url}/api/settings`, { headers: { cookie: value } })).status).toBe(200);
    // A forged expiry breaks the signature.
    const forged = value.replace(/=(\d+)\./, (_m, exp: string) => `=${Number(exp) + 1000}.`);
    expect((await fetch(`${h.url}/api/settings`, { headers: { cookie: forged } })).status).toBe(401);
  });

  it('refuses a wrong token, and is not there on the tunnel host', async () => {
    const wrong = await fetch(`${h.url}/api/auth/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: 'not-the-dashboard-token' }) });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    const remote = await callHost(tunnelHost, 'POST', '/api/auth/session', operator);
    expect(blocked(remote)).toBe(true);
  });
});

describe('frame ingest with a header token', () => {
  it('takes the dashboard token or the public API token, and delivers to the session\'s shares', async () => {
    await share();
    const send = (headers: Record<string, string>) =>
      callHost(tunnelHost, 'POST', `/api/voice/stream-ingest/frame?sessionId=${sessionId}`, headers);
    expect((await send({})).status).toBe(401);
    expect((await send({ 'x-public-api-token': 'wrong-public-token-000' })).status).toBe(401);
    expect((await send({ 'x-public-api-token': PUBLIC_API_TOKEN })).status).toBe(202);
    expect((await send(operator)).status).toBe(202);
    const unknown = await callHost(tunnelHost, 'POST', '/api/voice/stream-ingest/frame?sessionId=no-such-session', operator);
    expect(unknown.status).toBe(404);
  });

  it('answers 503 when neither DASHBOARD_TOKEN nor PUBLIC_API_TOKEN is configured', async () => {
    const bare = await startRuntimeHarness();
    try {
      const res = await fetch(`${bare.url}/api/voice/stream-ingest/frame?sessionId=x`, { method: 'POST', headers: { 'content-type': 'image/jpeg', 'x-public-api-token': PUBLIC_API_TOKEN }, body: new Uint8Array(JPEG) });
      expect(res.status).toBe(503);
      expect(((await res.json()) as { message: string }).message).toMatch(/DASHBOARD_TOKEN or PUBLIC_API_TOKEN/);
    } finally {
      await bare.stop();
    }
  });
});

describe('limits of the public frame routes', () => {
  it('answers 413 to a declared body over 6,000,000 bytes before reading it', async () => {
    const token = await share();
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: `/api/voice/share-session/${token}/frame`, headers: { host: tunnelHost, 'content-type': 'image/jpeg', 'content-length': '6000001' } });
    req.on('error', () => undefined); // the server closes the connection after answering
    req.write(JPEG); // the rest of the declared body is never sent
    const [res] = (await once(req, 'response')) as [http.IncomingMessage];
    expect(res.statusCode).toBe(413);
    res.resume();
    req.destroy();

    const full = Buffer.alloc(6_000_000);
    JPEG.copy(full);
    const ok = await fetch(`${h.url}/api/voice/share-session/${token}/frame`, { method: 'POST', headers: { 'content-type': 'image/jpeg' }, body: new Uint8Array(full) });
    expect(ok.status).toBe(202);
  });

  it('answers 429 after 1,200 requests per client and path in the window', async () => {
    const path = '/api/voice/share-session/AAAAAAAAAAAAAAAAAAAAAAAA/frame'; // unknown share: 404s count too
    const visitor = (ip: string) => ({ 'cf-connecting-ip': ip });
    const statuses: number[] = [];
    for (let batch = 0; batch < 12; batch++) {
      const batchResults = await Promise.all(Array.from({ length: 100 }, () => callHost(tunnelHost, 'POST', path, visitor('198.51.100.7'))));
      statuses.push(...batchResults.map((r) => r.status));
    }
    expect(statuses.filter((s) => s === 429)).toHaveLength(0);
    const over = http.request({ host: '127.0.0.1', port, method: 'POST', path, headers: { host: tunnelHost, ...visitor('198.51.100.7'), 'content-type': 'image/jpeg', 'content-length': String(JPEG.length) } });
    over.end(JPEG);
    const [res] = (await once(over, 'response')) as [http.IncomingMessage];
    res.resume();
    expect(res.statusCode).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
    // Another visitor, and another path, have their own windows.
    expect((await callHost(tunnelHost, 'POST', path, visitor('198.51.100.8'))).status).toBe(404);
    expect((await callHost(tunnelHost, 'POST', path.replace('AAAA', 'BBBB'), visitor('198.51.100.7'))).status).toBe(404);
  });
});

describe('start-up checks', () => {
  it('requires DASHBOARD_TOKEN with the public entrypoint or a non-loopback bind host', () => {
    expect(() => loadConfig({ PUBLIC_HTTPS_ENABLED: 'true' })).toThrow(/DASHBOARD_TOKEN: DASHBOARD_TOKEN is required when PUBLIC_HTTPS_ENABLED=true/);
    expect(() => loadConfig({ DASHBOARD_HOST: '0.0.0.0' })).toThrow(/DASHBOARD_TOKEN: DASHBOARD_TOKEN is required when DASHBOARD_HOST is not a loopback address/);
    expect(loadConfig({ DASHBOARD_HOST: '0.0.0.0', DASHBOARD_TOKEN }).DASHBOARD_HOST).toBe('0.0.0.0');
    expect(loadConfig({ DASHBOARD_HOST: '127.0.0.2' }).PUBLIC_HTTPS_ENABLED).toBe(false);
    expect(loadConfig({}).PUBLIC_HTTPS_TUNNEL_BIN).toBe('cloudflared');
  });
});
