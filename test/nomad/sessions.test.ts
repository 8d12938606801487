// SCHEDULER=nomad end to end: a control plane, two `caravan agent` processes (two nodes on this
// machine, distinct ports) and Nomad (the real one at NOMAD_ADDR, else the double, which runs
// each dispatched launcher as a real process). The real SDK creates sessions, playwright-core
// drives real Chromium through each node's CDP proxy; sessions spread; a killed agent's node
// goes DOWN and its sessions end in ERROR while the other node keeps serving.
import crypto from 'node:crypto';
import Browserbase from '@browserbasehq/sdk';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signNodeToken } from '../../server/auth/tokens.ts';
import { bundleLauncher } from '../../server/scheduler/launcherBundle.ts';
import { createCaller } from '../../server/trpc/router.ts';
import { spawnCaravan, type Child } from '../fixtures/processes.ts';
import { servePages, type Pages } from '../harness/pages.ts';
import { launcherPid } from '../harness/processes.ts';
import { startHarness, TEST_SECRET, type Harness } from '../harness/server.ts';
import { waitFor } from '../harness/waitFor.ts';
import { nomadTarget, REAL_NOMAD, type NomadTarget } from './target.ts';
import { HEARTBEAT, REGISTER_NODE } from '../../schema/node.ts';

const HEARTBEAT_MS = 300;
const HEARTBEAT_TIMEOUT_MS = 4_000;

interface AgentProc {
  nodeId: string;
  nomadNodeId: string;
  child: Child;
}

let t: NomadTarget;
let h: Harness;
let pages: Pages;
let bb: Browserbase;
let projectId: string;
let agents: AgentProc[] = [];
const onDouble = REAL_NOMAD ? it.skip : it;
const tag = crypto.randomBytes(3).toString('hex');

function startAgent(nodeId: string, nomadNodeId: string): AgentProc {
  const child = spawnCaravan(['agent'], {
    CARAVAN_NODE_ID: nodeId,
    CARAVAN_NOMAD_NODE_ID: nomadNodeId,
    CARAVAN_CONTROL_URL: h.url,
    SERVICE_JWT_SIGNING_KEY: TEST_SECRET,
    AGENT_CDP_PORT: '0',
    AGENT_CONTROL_PORT: '0',
    AGENT_WEBDRIVER_PORT: '0',
    AGENT_HEARTBEAT_MS: String(HEARTBEAT_MS),
    AGENT_IDLE_GRACE_MS: '60000',
    NODE_CAPACITY: '3',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
  });
  return { nodeId, nomadNodeId, child };
}

beforeAll(async () => {
  t = await nomadTarget({ nodes: [{ name: `nomad-client-a-${tag}` }, { name: `nomad-client-b-${tag}` }] });
  const launcher = bundleLauncher();
  [h, pages] = await Promise.all([
    startHarness({
      env: {
        SCHEDULER: 'nomad',
        NOMAD_ADDR: t.addr,
        NOMAD_NAMESPACE: t.namespace,
        ...(t.token ? { NOMAD_TOKEN: t.token } : {}),
        NOMAD_JOB_ID: t.jobId('caravan-test-browser'),
        NOMAD_LAUNCHER_COMMAND: `${process.execPath} ${launcher.entry}`,
        NODE_HEARTBEAT_TIMEOUT_MS: String(HEARTBEAT_TIMEOUT_MS),
        REAPER_INTERVAL_MS: '200',
        SERVICE_READY_WAIT_MS: '30000',
      },
    }),
    servePages(),
  ]);
  // Two Caravan nodes; against a single-client real Nomad both pin to that client.
  const nomadNodes = await t.client.listNodes();
  agents = [startAgent(`node-a-${tag}`, nomadNodes[0]!.ID), startAgent(`node-b-${tag}`, nomadNodes[1 % nomadNodes.length]!.ID)];
  await waitFor(async () => {
    const up = await h.deps.db.node.count({ where: { id: { in: agents.map((a) => a.nodeId) }, status: 'UP' } });
    return up === 2;
  }, { timeoutMs: 30_000, what: `both agents registered (output: ${agents.map((a) => a.child.output()).join('\n')})` });
  const p = await h.project({ concurrency: 10 });
  projectId = p.projectId;
  bb = new Browserbase({ apiKey: 'unused', baseURL: h.url, maxRetries: 0, defaultHeaders: { 'x-svc-api-key': p.apiKey } });
}, 90_000);

afterAll(async () => {
  if (h) {
    // End what is still live, so that Nomad stops the launchers before the agents go.
    const live = await h.deps.db.session.findMany({ where: { projectId, status: { notIn: ['STOPPED', 'FAILED'] } }, select: { id: true } });
    await Promise.all(live.map((s) => bb.sessions.update(s.id, { projectId, status: 'REQUEST_RELEASE' }).catch(() => undefined)));
  }
  await Promise.all(agents.map((a) => a.child.stop(5_000)));
  if (process.env.TEST_LOG_LEVEL) for (const a of agents) process.stderr.write(`--- agent ${a.nodeId}\n${a.child.output()}\n`);
  await h?.stop();
  await t?.close();
  await pages?.close();
}, 60_000);

const release = (id: string) => bb.sessions.update(id, { projectId, status: 'REQUEST_RELEASE' });
const row = (id: string) => h.deps.db.session.findUniqueOrThrow({ where: { id } });
const nodeRow = (id: string) => h.deps.db.node.findUniqueOrThrow({ where: { id } });

async function drive(connectUrl: string, name: string): Promise<void> {
  const browser = await chromium.connectOverCDP(connectUrl);
  try {
    const page = await browser.contexts()[0]!.newPage();
    await page.goto(`${pages.url}?name=${encodeURIComponent(name)}`);
    expect(await page.title()).toBe(name);
    expect(await page.evaluate(() => (window as unknown as { answer: number }).answer)).toBe(42);
  } finally {
    await browser.close();
  }
}

/** Routes an agent holds right now (its loopback control port's health answer). */
async function routesOf(nodeId: string): Promise<number> {
  const n = await nodeRow(nodeId);
  const res = await fetch(`http://127.0.0.1:${n.controlPort}/healthz`);
  return ((await res.json()) as { routes: number }).routes;
}

async function allocationsOf(taskRef: string) {
  return (await t.client.jobAllocations(taskRef.replace(/^nomad:/, ''))).value;
}

describe(`sessions on Nomad (${REAL_NOMAD ? `real Nomad at ${REAL_NOMAD}` : 'the double'})`, () => {
  it('serves sessions end to end through two agents, spread across both nodes', async () => {
    // SCHEDULER=nomad runs no node (and no warm pool) inside the control plane.
    expect('warmUp' in h.deps.scheduler).toBe(false);
    const [s1, s2] = await Promise.all([bb.sessions.create({ projectId, keepAlive: true }), bb.sessions.create({ projectId, keepAlive: true })]);
    const [r1, r2] = await Promise.all([row(s1.id), row(s2.id)]);
    expect(new Set([r1.nodeId, r2.nodeId])).toEqual(new Set(agents.map((a) => a.nodeId)));
    for (const [s, r] of [[s1, r1], [s2, r2]] as const) {
      expect(r.taskRef).toMatch(new RegExp(`^nomad:caravan-test-browser-[0-9a-f]+-${r.nodeId}/dispatch-\\d+-[0-9a-f]{8}$`));
      const node = await nodeRow(r.nodeId!);
      expect(s.connectUrl).toMatch(new RegExp(`^ws://127\\.0\\.0\\.1:${node.cdpPort}\\?signingKey=`));
      const allocs = await allocationsOf(r.taskRef!);
      expect(allocs).toHaveLength(1);
      expect(allocs[0]!.NodeID).toBe(node.nomadNodeId);
      expect(allocs[0]!.ClientStatus).toBe('running');
    }
    await Promise.all([drive(s1.connectUrl!, 'Node one'), drive(s2.connectUrl!, 'Node two')]);
    expect((await bb.sessions.retrieve(s1.id)).status).toBe('RUNNING');

    await Promise.all([release(s1.id), release(s2.id)]);
    for (const r of [r1, r2]) {
      // Nomad stops the launcher, which closes its browser and reports: the allocation completes.
      await waitFor(async () => (await allocationsOf(r.taskRef!))[0]?.ClientStatus === 'complete' || (await allocationsOf(r.taskRef!)).length === 0, { timeoutMs: 20_000, what: 'allocation complete' });
      expect((await bb.sessions.retrieve(r.id)).status).toBe('COMPLETED');
      await waitFor(async () => (await routesOf(r.nodeId!)) === 0, { what: 'route removed' });
    }
  });

  it('ends a session in ERROR with Nomad\'s reason when its allocation fails', async () => {
    const s = await bb.sessions.create({ projectId, keepAlive: true });
    const r = await row(s.id);
    const pid = await waitFor(() => launcherPid(h.deps.db, s.id), { what: 'launcher pid' });
    process.kill(pid, 'SIGKILL');
    await waitFor(async () => (await row(s.id)).status === 'FAILED', { timeoutMs: 15_000, what: 'session FAILED' });
    const ended = await row(s.id);
    expect((await bb.sessions.retrieve(s.id)).status).toBe('ERROR');
    expect(ended.errorMessage).toMatch(/^the browser's Nomad allocation [0-9a-f]{8} failed on \S+: task launcher: /);
    // The control plane told the agent: its route for the session is gone.
    await waitFor(async () => (await routesOf(r.nodeId!)) === 0, { what: 'route released by command' });
  });

  it('places nothing on a draining node', async () => {
    const [a, b] = agents;
    const operator = createCaller({ deps: h.deps, operator: true });
    // The operator's CLI, over tRPC (loopback, no dashboard token set).
    const cli = spawnCaravan(['node', 'drain', a!.nodeId, '--url', h.url], {});
    expect(await cli.exited).toEqual({ code: 0, signal: null });
    expect(JSON.parse(cli.output())).toMatchObject({ id: a!.nodeId, status: 'DRAINING', capacity: 3 });
    try {
      const s = await bb.sessions.create({ projectId });
      expect((await row(s.id)).nodeId).toBe(b!.nodeId);
      await release(s.id);
      // A heartbeat does not undo a drain.
      await new Promise((r) => setTimeout(r, HEARTBEAT_MS * 3));
      expect((await nodeRow(a!.nodeId)).status).toBe('DRAINING');
      expect((await operator.node.list()).find((n) => n.id === a!.nodeId)).toMatchObject({ status: 'DRAINING' });
    } finally {
      await h.deps.db.node.update({ where: { id: a!.nodeId }, data: { status: 'UP' } });
    }
  });

  it('fails at once, with Nomad\'s reason, a session Nomad cannot place', async () => {
    // A node whose agent claims a Nomad client that does not exist: its pinned job never fits.
    const ghost = `ghost-${tag}`;
    const token = await signNodeToken({ get: async () => new TextEncoder().encode(TEST_SECRET) }, ghost);
    const gql = async (query: string, input: unknown) => {
      const res = await fetch(`${h.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ query, variables: { input } }) });
      return (await res.json()) as { data?: Record<string, unknown>; errors?: Array<{ message: string }> };
    };
    const reg = await gql(REGISTER_NODE, { nodeId: ghost, publicHost: '127.0.0.1', cdpPort: 9, tls: false, capacity: 5, controlPort: 9, nomadNodeId: 'no-such-nomad-node' });
    expect(reg).toEqual({ data: { registerNode: { status: 'UP' } } });
    expect((await gql(HEARTBEAT, { nodeId: 'someone-else', routes: 0 })).errors?.[0]?.message).toMatch(/this credential is for node ghost-/);
    await h.deps.db.node.updateMany({ where: { id: { in: agents.map((a) => a.nodeId) } }, data: { status: 'DRAINING' } });
    try {
      const t0 = Date.now();
      const err = await bb.sessions.create({ projectId }).catch((e: unknown) => e as Error);
      expect(err).toBeInstanceOf(Error);
      expect(err instanceof Error && err.message).toMatch(/Nomad could not place the browser job .*constraint \$\{node\.unique\.id\} = no-such-nomad-node/);
      expect(Date.now() - t0).toBeLessThan(15_000);
    } finally {
      await h.deps.db.node.updateMany({ where: { id: { in: agents.map((a) => a.nodeId) } }, data: { status: 'UP' } });
      await h.deps.db.node.update({ where: { id: ghost }, data: { status: 'DOWN', heartbeatAt: new Date(0) } });
    }
  });

  it('marks a node whose agent was killed DOWN and ends its sessions in ERROR; the other node keeps serving', async () => {
    // One session on each node. Placement spreads by load, and sessions other tests left
    // ending can tilt it, so create until both nodes hold one (a few creates at most).
    const byNode = new Map<string | null, Awaited<ReturnType<typeof bb.sessions.create>>>();
    const extra: string[] = [];
    for (let i = 0; i < 6 && byNode.size < 2; i++) {
      const s = await bb.sessions.create({ projectId, keepAlive: true });
      const nodeId = (await row(s.id)).nodeId;
      if (byNode.has(nodeId)) extra.push(s.id);
      else byNode.set(nodeId, s);
    }
    await Promise.all(extra.map((id) => release(id)));
    const [victim, survivor] = agents;
    const doomed = byNode.get(victim!.nodeId)!;
    const kept = byNode.get(survivor!.nodeId)!;
    expect(doomed).toBeDefined();
    expect(kept).toBeDefined();

    const t0 = Date.now();
    victim!.child.proc.kill('SIGKILL');
    await waitFor(async () => (await row(doomed.id)).status === 'FAILED', { timeoutMs: HEARTBEAT_TIMEOUT_MS + 5_000, what: 'the dead node\'s session in ERROR' });
    expect(Date.now() - t0).toBeLessThan(HEARTBEAT_TIMEOUT_MS + 4_000);
    expect((await nodeRow(victim!.nodeId)).status).toBe('DOWN');
    const ended = await row(doomed.id);
    expect(ended.endReason).toBe('NODE_DOWN');
    expect(ended.errorMessage).toMatch(/missed its heartbeats/);
    expect((await bb.sessions.retrieve(doomed.id)).status).toBe('ERROR');

    // The survivor's session is untouched and its browser still answers.
    expect((await bb.sessions.retrieve(kept.id)).status).toBe('RUNNING');
    await drive(kept.connectUrl!, 'Still here');
    // New sessions land on the live node.
    const next = await bb.sessions.create({ projectId, keepAlive: true });
    expect((await row(next.id)).nodeId).toBe(survivor!.nodeId);
    await drive(next.connectUrl!, 'After the loss');
    await Promise.all([release(kept.id), release(next.id)]);
  });

  onDouble('ends a session in ERROR (NODE_DOWN) when Nomad loses its allocation', async () => {
    const survivor = agents[1]!;
    const s = await bb.sessions.create({ projectId, keepAlive: true });
    expect((await row(s.id)).nodeId).toBe(survivor.nodeId);
    t.double!.markNodeDown(survivor.nomadNodeId);
    await waitFor(async () => (await row(s.id)).status === 'FAILED', { timeoutMs: 10_000, what: 'session FAILED' });
    const ended = await row(s.id);
    expect(ended.endReason).toBe('NODE_DOWN');
    expect(ended.errorMessage).toMatch(/Nomad lost the browser's allocation [0-9a-f]{8}: its node nomad-client-b-\w+ is down or disconnected/);
  });
});
