// Cost of the CDP proxy: sequential Runtime.evaluate round trips per second and the time to
// move a 10 MB result, through the session's connectUrl and directly against a browser's own port.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { z } from 'zod';
import { launchChromium, parseActivePort, type Chromium } from '../../agent/launcher/chromium.ts';
import { attachToPage, browserPid, CdpClient, Evaluated } from './cdp.ts';
import { progress, since } from './log.ts';
import { listProcesses, tree, userDataDirOf } from './procfs.ts';
import { createSession, releaseSession, type BenchServer } from './server.ts';
import { median, round } from './stats.ts';

const BIG_CHARS = 10_000_000;
/** The 10 MB transfer runs in every BIG_EVERY-th round (3 per side each time). */
const BIG_EVERY = 4;
const Json = z.object({ webSocketDebuggerUrl: z.string() });

export interface ProxyRound {
  proxiedRps: number;
  directRps: number;
  proxiedBigMs: number;
  directBigMs: number;
}

export interface ProxyResult {
  calls: number;
  rounds: ProxyRound[];
  /** What relayed the proxied side after the handshake (AGENT_RELAY of the server). */
  relay: string;
  /** What the direct side talked to. */
  direct: 'same-browser' | 'bare-chromium';
  directNote: string;
  proxiedRps: number;
  directRps: number;
  /** Median over rounds of proxied/direct round trips per second. */
  rpsRatio: number;
  proxiedBigMs: number;
  directBigMs: number;
  proxiedMBps: number;
  directMBps: number;
  /** Median over rounds of proxied/direct throughput (= direct time / proxied time). */
  throughputRatio: number;
}

interface Side {
  cdp: CdpClient;
  sessionId: string;
}

async function roundTrips(side: Side, calls: number): Promise<number> {
  const t = performance.now();
  for (let i = 0; i < calls; i++) {
    await side.cdp.send(Evaluated, 'Runtime.evaluate', { expression: '6 * 7', returnByValue: true }, side.sessionId);
  }
  return calls / (since(t) / 1000);
}

async function bigResult(side: Side): Promise<number> {
  const t = performance.now();
  const r = await side.cdp.send(Evaluated, 'Runtime.evaluate', { expression: `'x'.repeat(${BIG_CHARS})`, returnByValue: true }, side.sessionId);
  const ms = since(t);
  if (typeof r.result.value !== 'string' || r.result.value.length !== BIG_CHARS) throw new Error('the 10 MB evaluate did not return the whole string');
  return ms;
}

/** socat when a socat process relays one of this server's connections right now, else node. */
function relayOf(server: BenchServer): string {
  return tree(server.pid, listProcesses()).some((p) => p.comm === 'socat') ? 'socat' : 'node';
}

/** The session browser's own CDP endpoint: pid over CDP, then DevToolsActivePort in its profile. */
async function ownEndpoint(proxied: CdpClient): Promise<string | undefined> {
  const pid = await browserPid(proxied);
  const dir = userDataDirOf(pid);
  if (!dir) return undefined;
  const active = parseActivePort(await fs.readFile(path.join(dir, 'DevToolsActivePort'), 'utf8').catch(() => ''));
  return active ? `ws://127.0.0.1:${active.port}${active.wsPath}` : undefined;
}

export async function runProxy(server: BenchServer, opts: { chromePath: string; calls?: number; rounds?: number }): Promise<ProxyResult> {
  const calls = opts.calls ?? 500;
  const rounds = opts.rounds ?? 28;
  const s = await createSession(server, true);
  // The proxy's /json/version answers with the debugger URL rewritten to point at itself.
  const cu = new URL(s.connectUrl);
  const token = cu.searchParams.get('signingKey') ?? '';
  const versionRes = await fetch(`http://${cu.host}/json/version?signingKey=${encodeURIComponent(token)}`);
  const proxiedUrl = Json.parse(await versionRes.json()).webSocketDebuggerUrl;
  const proxied = await CdpClient.connect(proxiedUrl);
  let bare: Chromium | undefined;
  let bareDir: string | undefined;
  let direct: CdpClient | undefined;
  try {
    let kind: ProxyResult['direct'] = 'same-browser';
    let note = 'direct = the same session browser, on its own CDP port (read from DevToolsActivePort in its --user-data-dir)';
    let directUrl = await ownEndpoint(proxied).catch(() => undefined);
    if (!directUrl) {
      kind = 'bare-chromium';
      bareDir = await fs.mkdtemp(path.join(os.tmpdir(), 'caravan-bench-direct-'));
      bare = await launchChromium({ chromePath: opts.chromePath, userDataDir: bareDir, log: pino({ level: 'silent' }) });
      directUrl = `ws://127.0.0.1:${bare.port}${bare.wsPath}`;
      note = `direct = a separate bare Chromium (${opts.chromePath}) started with launchChromium; the session browser's own port could not be read`;
    }
    direct = await CdpClient.connect(directUrl);
    // Both sides evaluate in a page of their browser (the same page when it is the same browser).
    const p = await attachToPage(proxied);
    const d = await attachToPage(direct, kind === 'same-browser' ? p.targetId : undefined);
    const sides = { proxied: { cdp: proxied, sessionId: p.sessionId }, direct: { cdp: direct, sessionId: d.sessionId } };
    progress(`proxy: ${note}`);

    // Untimed warm-up of both paths (JIT, socket buffers).
    for (const side of [sides.proxied, sides.direct]) {
      await roundTrips(side, 200);
      await bigResult(side);
    }
    // Round trips in short blocks (500 calls, a quarter second or so), alternating which side goes
    // first: the noise of a shared machine comes in bursts of a second or more, and short
    // alternating blocks let it fall on both sides alike. The 10 MB transfer in every 4th round.
    const results: ProxyRound[] = [];
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? (['proxied', 'direct'] as const) : (['direct', 'proxied'] as const);
      const rps: Record<string, number> = {};
      const big: Record<string, number> = {};
      for (const name of order) rps[name] = await roundTrips(sides[name], calls);
      if (r % BIG_EVERY === 0) {
        for (const name of order) big[name] = median([await bigResult(sides[name]), await bigResult(sides[name]), await bigResult(sides[name])]);
      }
      const one: ProxyRound = { proxiedRps: rps.proxied ?? 0, directRps: rps.direct ?? 0, proxiedBigMs: big.proxied ?? Number.NaN, directBigMs: big.direct ?? Number.NaN };
      results.push(one);
      if ((r + 1) % BIG_EVERY === 0 || r + 1 === rounds) {
        const recent = results.slice(-BIG_EVERY);
        const bigs = results.filter((x) => !Number.isNaN(x.proxiedBigMs)).at(-1);
        progress(`proxy ${r + 1}/${rounds}: ${Math.round(median(recent.map((x) => x.proxiedRps)))} vs ${Math.round(median(recent.map((x) => x.directRps)))} rt/s direct; 10 MB ${Math.round(bigs?.proxiedBigMs ?? 0)} vs ${Math.round(bigs?.directBigMs ?? 0)} ms direct`);
      }
    }
    const withBig = results.filter((x) => !Number.isNaN(x.proxiedBigMs));
    const proxiedBigMs = median(withBig.map((x) => x.proxiedBigMs));
    const directBigMs = median(withBig.map((x) => x.directBigMs));
    const mb = BIG_CHARS / 1e6;
    return {
      calls,
      rounds: results.map((x) => ({ proxiedRps: round(x.proxiedRps), directRps: round(x.directRps), proxiedBigMs: round(x.proxiedBigMs), directBigMs: round(x.directBigMs) })),
      relay: relayOf(server),
      direct: kind,
      directNote: note,
      proxiedRps: round(median(results.map((x) => x.proxiedRps))),
      directRps: round(median(results.map((x) => x.directRps))),
      rpsRatio: round(median(results.map((x) => x.proxiedRps / x.directRps)), 3),
      proxiedBigMs: round(proxiedBigMs),
      directBigMs: round(directBigMs),
      proxiedMBps: round(mb / (proxiedBigMs / 1000)),
      directMBps: round(mb / (directBigMs / 1000)),
      throughputRatio: round(median(withBig.map((x) => x.directBigMs / x.proxiedBigMs)), 3),
    };
  } finally {
    direct?.close();
    proxied.close();
    await releaseSession(server, s.id).catch(() => undefined);
    if (bare) await bare.close();
    if (bareDir) await fs.rm(bareDir, { recursive: true, force: true });
  }
}
