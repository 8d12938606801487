// Bad input on every REST route: each answer has the right status, the failure shape
// { success: false, message } with a message that tells the caller what to fix, and nothing
// at all is written to the database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, revokeApiKey } from '../../server/auth/apiKeys.ts';
import { reportingScheduler } from '../harness/reportingScheduler.ts';
import { startHarness, type Harness } from '../harness/server.ts';

let h: Harness;
let own: { projectId: string; apiKey: string };
let foreign: { projectId: string; apiKey: string };
let ownSession: string;
let foreignSession: string;
let revokedKey: string;
const UNKNOWN_SESSION = 'sess_00000000-0000-4000-8000-000000000000';

async function createWith(apiKey: string): Promise<string> {
  const res = await fetch(`${h.url}/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-svc-api-key': apiKey }, body: '{}' });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

beforeAll(async () => {
  h = await startHarness({ scheduler: (deps) => reportingScheduler({ deps }), env: { SERVICE_MAX_SESSION_TIMEOUT: '7200' } });
  own = await h.project();
  foreign = await h.project();
  ownSession = await createWith(own.apiKey);
  foreignSession = await createWith(foreign.apiKey);
  const revoked = await createApiKey(h.deps.db, [own.projectId]);
  await revokeApiKey(h.deps.db, revoked.id);
  revokedKey = revoked.key;
});
afterAll(() => h?.stop());

/** Everything stored for the two projects, down to the columns a write would touch. */
async function snapshot() {
  const projectIds = [own.projectId, foreign.projectId];
  const db = h.deps.db;
  const [sessions, events, usage, keys, links, projects] = await Promise.all([
    db.session.findMany({ where: { projectId: { in: projectIds } }, orderBy: { id: 'asc' } }),
    db.sessionEvent.findMany({ where: { projectId: { in: projectIds } }, orderBy: { seq: 'asc' } }),
    db.usage.findMany({ where: { projectId: { in: projectIds } }, orderBy: { sessionId: 'asc' } }),
    db.apiKey.findMany({ where: { projects: { some: { projectId: { in: projectIds } } } }, orderBy: { id: 'asc' } }),
    db.apiKeyProject.findMany({ where: { projectId: { in: projectIds } }, orderBy: [{ apiKeyId: 'asc' }, { projectId: 'asc' }] }),
    db.project.findMany({ where: { id: { in: projectIds } }, orderBy: { id: 'asc' } }),
  ]);
  return {
    counts: { Session: sessions.length, SessionEvent: events.length, Usage: usage.length, ApiKey: keys.length, ApiKeyProject: links.length, Project: projects.length },
    rows: JSON.stringify({ sessions, events, usage, keys, links, projects }, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)),
  };
}

type Key = 'own' | 'foreign' | 'none' | 'unknown' | 'revoked';
interface Case {
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path; {own}, {foreign}, {ownProject}, {foreignProject} and {unknown} are filled in. */
  path: string;
  key?: Key;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as is, with content-type application/json unless headers say otherwise. */
  raw?: string;
  status: number;
  /** What the message must mention to help the caller. */
  mentions: RegExp;
}

const big = { userId: 'u', blob: 'x'.repeat(16 * 1024) };

const cases: Case[] = [
  // Body syntax and shape.
  { name: 'malformed JSON', method: 'POST', path: '/v1/sessions', raw: '{"projectId": ', status: 400, mentions: /malformed JSON/ },
  { name: 'an empty JSON body on release', method: 'POST', path: '/v1/sessions/{own}', raw: '', status: 400, mentions: /status must be REQUEST_RELEASE/ },
  { name: 'no body at all on release', method: 'POST', path: '/v1/sessions/{own}', status: 400, mentions: /status/ },
  { name: 'a body that is an array', method: 'POST', path: '/v1/sessions', json: [{ projectId: 'x' }], status: 400, mentions: /object/ },
  { name: 'a body that is a string', method: 'POST', path: '/v1/sessions', json: 'please start a browser', status: 400, mentions: /object/ },
  { name: 'a plain-text body', method: 'POST', path: '/v1/sessions', raw: 'projectId=x', headers: { 'content-type': 'text/plain' }, status: 400, mentions: /object/ },
  { name: 'a form-encoded body', method: 'POST', path: '/v1/sessions', raw: 'projectId=x', headers: { 'content-type': 'application/x-www-form-urlencoded' }, status: 415, mentions: /Content-Type application\/x-www-form-urlencoded.*application\/json/ },
  { name: 'a body above 1 MiB', method: 'POST', path: '/v1/sessions', json: { userMetadata: { blob: 'x'.repeat(1024 * 1024) } }, status: 413, mentions: /too large/i },
  // Field types and values on create.
  { name: 'keepAlive "yes"', method: 'POST', path: '/v1/sessions', json: { keepAlive: 'yes' }, status: 400, mentions: /keepAlive/ },
  { name: 'timeout "60" (a string)', method: 'POST', path: '/v1/sessions', json: { timeout: '60' }, status: 400, mentions: /timeout/ },
  { name: 'timeout 1.5', method: 'POST', path: '/v1/sessions', json: { timeout: 1.5 }, status: 400, mentions: /timeout.*whole number/ },
  { name: 'a negative timeout', method: 'POST', path: '/v1/sessions', json: { timeout: -60 }, status: 400, mentions: /timeout.*>= 60/ },
  { name: 'a zero timeout', method: 'POST', path: '/v1/sessions', json: { timeout: 0 }, status: 400, mentions: /timeout.*>= 60/ },
  { name: 'a timeout above SERVICE_MAX_SESSION_TIMEOUT', method: 'POST', path: '/v1/sessions', json: { timeout: 7201 }, status: 400, mentions: /7200.*SERVICE_MAX_SESSION_TIMEOUT/ },
  { name: 'userMetadata as an array', method: 'POST', path: '/v1/sessions', json: { userMetadata: ['u-1'] }, status: 400, mentions: /userMetadata/ },
  { name: 'userMetadata above 16 KiB', method: 'POST', path: '/v1/sessions', json: { userMetadata: big }, status: 400, mentions: /userMetadata.*16384 bytes/ },
  { name: 'userMetadata.userId that is not a string', method: 'POST', path: '/v1/sessions', json: { userMetadata: { userId: 42 } }, status: 400, mentions: /userId must be a string/ },
  { name: 'an unknown top-level field', method: 'POST', path: '/v1/sessions', json: { colour: 'blue' }, status: 400, mentions: /unknown field 'colour'/ },
  { name: 'an unknown region', method: 'POST', path: '/v1/sessions', json: { region: 'mars-north-1' }, status: 400, mentions: /region must be one of us-east-1/ },
  { name: 'a viewport width that is not an integer', method: 'POST', path: '/v1/sessions', json: { browserSettings: { viewport: { width: 1280.5, height: 720 } } }, status: 400, mentions: /browserSettings\.viewport\.width/ },
  { name: 'a viewport width that is too small', method: 'POST', path: '/v1/sessions', json: { browserSettings: { viewport: { width: 10, height: 720 } } }, status: 400, mentions: /browserSettings\.viewport\.width.*100/ },
  { name: 'a viewport with an unknown field', method: 'POST', path: '/v1/sessions', json: { browserSettings: { viewport: { width: 1280, height: 720, depth: 3 } } }, status: 400, mentions: /viewport.*unknown field 'depth'/ },
  { name: 'a context id of the wrong form', method: 'POST', path: '/v1/sessions', json: { browserSettings: { context: { id: 'profile-1' } } }, status: 400, mentions: /ctx_<id>/ },
  // Credentials and project scope.
  { name: 'a missing API key', method: 'GET', path: '/v1/sessions', key: 'none', status: 401, mentions: /x-svc-api-key/ },
  { name: 'an unknown API key', method: 'POST', path: '/v1/sessions', key: 'unknown', json: {}, status: 401, mentions: /invalid or revoked API key/ },
  { name: 'a revoked API key', method: 'POST', path: '/v1/sessions', key: 'revoked', json: {}, status: 401, mentions: /revoked/ },
  { name: 'a revoked API key on retrieve', method: 'GET', path: '/v1/sessions/{own}', key: 'revoked', status: 401, mentions: /revoked/ },
  { name: 'a foreign project in the body', method: 'POST', path: '/v1/sessions', json: { projectId: '{foreignProject}' }, status: 404, mentions: /project .* not found/ },
  { name: 'a foreign project in x-svc-project-id', method: 'POST', path: '/v1/sessions', headers: { 'x-svc-project-id': '{foreignProject}' }, json: {}, status: 404, mentions: /project .* not found/ },
  { name: 'a foreign project in x-svc-project-id on list', method: 'GET', path: '/v1/sessions', headers: { 'x-svc-project-id': '{foreignProject}' }, status: 404, mentions: /project .* not found/ },
  // Unknown and foreign sessions.
  { name: 'retrieve of an unknown session', method: 'GET', path: '/v1/sessions/{unknown}', status: 404, mentions: /session sess_0{8}-.* not found/ },
  { name: 'release of an unknown session', method: 'POST', path: '/v1/sessions/{unknown}', json: { status: 'REQUEST_RELEASE' }, status: 404, mentions: /session .* not found/ },
  { name: 'debug of an unknown session', method: 'GET', path: '/v1/sessions/{unknown}/debug', status: 404, mentions: /session .* not found/ },
  { name: 'cdp-url of an unknown session', method: 'POST', path: '/sessions/{unknown}/cdp-url', json: {}, status: 404, mentions: /session .* not found/ },
  { name: 'retrieve of another project\'s session', method: 'GET', path: '/v1/sessions/{foreign}', status: 404, mentions: /session .* not found/ },
  { name: 'release of another project\'s session', method: 'POST', path: '/v1/sessions/{foreign}', json: { status: 'REQUEST_RELEASE' }, status: 404, mentions: /session .* not found/ },
  { name: 'debug of another project\'s session', method: 'GET', path: '/v1/sessions/{foreign}/debug', status: 404, mentions: /session .* not found/ },
  { name: 'cdp-url of another project\'s session', method: 'POST', path: '/sessions/{foreign}/cdp-url', json: {}, status: 404, mentions: /session .* not found/ },
  { name: 'release naming another project than the session\'s', method: 'POST', path: '/v1/sessions/{own}', json: { projectId: '{foreignProject}', status: 'REQUEST_RELEASE' }, status: 404, mentions: /not found/ },
  // Release and cdp-url bodies.
  { name: 'release with a wrong status value', method: 'POST', path: '/v1/sessions/{own}', json: { status: 'STOP' }, status: 400, mentions: /status must be REQUEST_RELEASE/ },
  { name: 'release with the status missing', method: 'POST', path: '/v1/sessions/{own}', json: { projectId: '{ownProject}' }, status: 400, mentions: /status must be REQUEST_RELEASE/ },
  { name: 'cdp-url with expiresIn 0', method: 'POST', path: '/sessions/{own}/cdp-url', json: { expiresIn: 0 }, status: 400, mentions: /expiresIn/ },
  { name: 'cdp-url with expiresIn as a string', method: 'POST', path: '/sessions/{own}/cdp-url', json: { expiresIn: '600' }, status: 400, mentions: /expiresIn/ },
  // List filters.
  { name: 'list with an unknown status filter', method: 'GET', path: '/v1/sessions?status=PAUSED', status: 400, mentions: /status.*RUNNING/ },
  { name: 'list with q that looks like JSON but does not parse', method: 'GET', path: `/v1/sessions?q=${encodeURIComponent('{"userId": ')}`, status: 400, mentions: /q: looks like JSON/ },
  { name: 'list with an unknown query parameter', method: 'GET', path: '/v1/sessions?limit=5', status: 400, mentions: /query.*unknown field 'limit'/ },
  // Projects.
  { name: 'retrieve of a foreign project', method: 'GET', path: '/v1/projects/{foreignProject}', status: 404, mentions: /project .* not found/ },
  { name: 'usage of a foreign project', method: 'GET', path: '/v1/projects/{foreignProject}/usage', status: 404, mentions: /project .* not found/ },
  { name: 'retrieve of an unknown project', method: 'GET', path: '/v1/projects/proj_does-not-exist', status: 404, mentions: /project proj_does-not-exist not found/ },
  // Not implemented.
  { name: 'session logs', method: 'GET', path: '/v1/sessions/{own}/logs', status: 501, mentions: /logs.*not implemented/ },
  { name: 'session recording', method: 'GET', path: '/v1/sessions/{own}/recording', status: 501, mentions: /recording.*not implemented/ },
  { name: 'session uploads', method: 'POST', path: '/v1/sessions/{own}/uploads', json: {}, status: 501, mentions: /uploads.*not implemented/ },
  { name: 'create extension', method: 'POST', path: '/v1/extensions', json: {}, status: 501, mentions: /extensions.*not implemented/ },
  { name: 'delete extension', method: 'DELETE', path: '/v1/extensions/ext_1', status: 501, mentions: /extensions.*not implemented/ },
  ...['start', '{own}/act', '{own}/extract', '{own}/observe', '{own}/navigate', '{own}/agentExecute'].map((p): Case => ({
    name: `API mode POST /sessions/${p}`, method: 'POST', path: `/sessions/${p}`, json: { modelName: 'gpt-4o' }, status: 501, mentions: /POST \/v1\/sessions/,
  })),
  { name: 'an unknown route', method: 'GET', path: '/v1/sesions', status: 404, mentions: /no route GET \/v1\/sesions/ },
];

function fill(s: string): string {
  return s
    .replaceAll('{ownProject}', own.projectId)
    .replaceAll('{foreignProject}', foreign.projectId)
    .replaceAll('{own}', ownSession)
    .replaceAll('{foreign}', foreignSession)
    .replaceAll('{unknown}', UNKNOWN_SESSION);
}

function keyFor(k: Key): string | undefined {
  switch (k) {
    case 'own': return own.apiKey;
    case 'foreign': return foreign.apiKey;
    case 'none': return undefined;
    case 'unknown': return 'cvn_this-key-was-never-issued-000000000000';
    case 'revoked': return revokedKey;
  }
}

async function send(c: Case) {
  const headers: Record<string, string> = {};
  const key = keyFor(c.key ?? 'own');
  if (key) headers['x-svc-api-key'] = key;
  let body: string | undefined;
  if (c.json !== undefined) body = fill(JSON.stringify(c.json));
  if (c.raw !== undefined) body = c.raw;
  if (body !== undefined) headers['content-type'] = 'application/json';
  for (const [k, v] of Object.entries(c.headers ?? {})) headers[k] = fill(v);
  const res = await fetch(`${h.url}${fill(c.path)}`, { method: c.method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: res.status, body: parsed };
}

describe('bad input', () => {
  it('has a table of at least 25 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(25);
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
  });

  it.each(cases.map((c) => [c.name, c] as const))('answers %s with a clear failure and writes nothing', async (_name, c) => {
    const before = await snapshot();
    const res = await send(c);
    const after = await snapshot();

    expect({ status: res.status, body: res.body }).toMatchObject({ status: c.status, body: { success: false } });
    const body = res.body as { success: boolean; message: unknown };
    expect(Object.keys(body).sort()).toEqual(['message', 'success']);
    expect(typeof body.message).toBe('string');
    expect((body.message as string).length).toBeGreaterThan(10);
    expect(body.message).toMatch(c.mentions);
    // A failure never leaks internals.
    expect(body.message).not.toMatch(/prisma|stack|at .*\.ts:\d+/i);

    expect(after.counts).toEqual(before.counts);
    expect(after.rows).toBe(before.rows);
  });

  it('left the sessions the cases aimed at untouched and running', async () => {
    const rows = await h.deps.db.session.findMany({ where: { id: { in: [ownSession, foreignSession] } } });
    expect(rows.map((r) => r.status).sort()).toEqual(['READY', 'READY']);
  });
});
