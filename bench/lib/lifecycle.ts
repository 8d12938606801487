// Session lifecycle timings through the real SDK and Playwright: create, connect, navigate,
// release; back to back, each iteration starting once the previous browser process is gone.
import { chromium } from 'playwright-core';
import { progress, since } from './log.ts';
import { launchersOf, startSeconds, uptimeSeconds } from './procfs.ts';
import { waitGone } from './probe.ts';
import fs from 'node:fs';
import path from 'node:path';
import { createSession, releaseSession, serverBrowsers, until, type BenchServer } from './server.ts';
import { round, summarize, type Summary } from './stats.ts';

export const PHASES = ['create', 'connect', 'navigate', 'release'] as const;
export type Phase = (typeof PHASES)[number];

export interface Iteration extends Record<Phase, number> {
  /** Release call start to the browser process being gone (untimed in the phases). */
  gone: number;
  /** Whether the browser process existed before the create was sent (a pooled browser). */
  pooled: boolean | null;
}

export interface LifecycleResult {
  mode: string;
  poolSize: number;
  poolBrowsersAtStart: number;
  iterations: Iteration[];
  phases: Record<Phase | 'gone' | 'total', Summary>;
  pooledCreates: number;
  /** Untimed wait before each warm create until a pooled browser was up (the refill time). */
  poolRefillWait: Summary | null;
  /** Untimed wait before each cold create until the node was at rest (previous launcher gone, spares back). */
  restWait: Summary | null;
  /** Create times split by whether the browser was pooled (empty when none or all were). */
  createPooled: Summary | null;
  createFresh: Summary | null;
}

async function iterate(server: BenchServer, pageUrl: string): Promise<Iteration> {
  const createdAt = uptimeSeconds();
  let t = performance.now();
  const s = await createSession(server);
  const create = since(t);

  t = performance.now();
  const browser = await chromium.connectOverCDP(s.connectUrl);
  const connect = since(t);

  let pid: number | undefined;
  let navigate = 0;
  let release = 0;
  let gone = Number.NaN;
  try {
    t = performance.now();
    const context = browser.contexts()[0] ?? (await browser.newContext());
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(pageUrl, { waitUntil: 'load' });
    navigate = since(t);

    const cdp = await browser.newBrowserCDPSession();
    const { processInfo } = await cdp.send('SystemInfo.getProcessInfo');
    pid = processInfo.find((p) => p.type === 'browser')?.id;
    await cdp.detach();
  } finally {
    t = performance.now();
    await releaseSession(server, s.id);
    release = since(t);
    await browser.close().catch(() => undefined);
  }
  const started = pid === undefined ? undefined : startSeconds(pid);
  if (pid !== undefined) {
    if (!(await waitGone(pid))) throw new Error(`browser pid ${pid} of session ${s.id} was still running 30 s after release`);
    gone = since(t);
  }
  // 10 ms clock resolution; a browser started for this create cannot start within 20 ms of it.
  const pooled = started === undefined ? null : started + 0.02 < createdAt;
  return { create, connect, navigate, release, gone, pooled };
}

/** Untimed pause after a wait for the node's state, before the timed create. */
const SETTLE_MS = 250;

/**
 * With a pool, "warm" means what it says: the create is timed once the pool is full and its
 * browsers are up (their DevToolsActivePort exists, so CDP answers). How long that wait was is recorded apart:
 * it is the pool's refill time, which back-to-back creates faster than it cannot hide.
 */
async function waitForWarmPool(server: BenchServer, poolSize: number, timeoutMs = 15_000): Promise<number> {
  const t = performance.now();
  // Between iterations every browser under the data dir is a pooled one (the previous
  // session's is gone): the pool is warm when it is full and all of them answer CDP.
  const warm = () => {
    const browsers = serverBrowsers(server);
    return browsers.length >= poolSize && browsers.every((b) => fs.existsSync(path.join(b.profile, 'DevToolsActivePort')));
  };
  if (!(await until(warm, timeoutMs, 20))) throw new Error(`no pooled browser was ready within ${timeoutMs} ms`);
  // A browser keeps its cores busy for a moment after CDP answers, and the launcher signals
  // its scheduler right after: let both settle.
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  return since(t);
}

/**
 * Without a pool, "cold" means a node at rest with nothing started for the session: the
 * previous session's launcher has exited and the spare launchers (`spares`, Node only, no
 * browser) are back. Like the warm wait, this is recorded apart and left out of the sum.
 */
async function waitForRestingNode(server: BenchServer, spares: number, timeoutMs = 15_000): Promise<number> {
  const t = performance.now();
  const resting = () => {
    const launchers = launchersOf(server.pid);
    return launchers.length === spares && serverBrowsers(server).length === 0;
  };
  if (!(await until(resting, timeoutMs, 20))) throw new Error(`the node did not come to rest (${spares} spare launchers, no browser) within ${timeoutMs} ms`);
  // The same settling time as the warm wait: a spare that was just spawned is still loading.
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  return since(t);
}

export async function runLifecycle(server: BenchServer, opts: { mode: string; poolSize: number; spares: number; poolBrowsersAtStart: number; iterations: number; pageUrl: string }): Promise<LifecycleResult> {
  const iterations: Iteration[] = [];
  const refillWaits: number[] = [];
  const restWaits: number[] = [];
  for (let i = 1; i <= opts.iterations; i++) {
    if (opts.poolSize > 0) refillWaits.push(await waitForWarmPool(server, opts.poolSize));
    else restWaits.push(await waitForRestingNode(server, opts.spares));
    const it = await iterate(server, opts.pageUrl);
    iterations.push(it);
    const pooled = it.pooled === null ? '?' : it.pooled ? 'yes' : 'no';
    progress(`lifecycle ${opts.mode} ${i}/${opts.iterations} create ${Math.round(it.create)} ms, connect ${Math.round(it.connect)}, navigate ${Math.round(it.navigate)}, release ${Math.round(it.release)}, gone after ${Math.round(it.gone)}; pooled=${pooled}`);
  }
  const pick = (f: (it: Iteration) => number, from = iterations) => from.map(f);
  const pooledOnes = iterations.filter((it) => it.pooled === true);
  const freshOnes = iterations.filter((it) => it.pooled === false);
  const both = pooledOnes.length > 0 && freshOnes.length > 0;
  return {
    mode: opts.mode,
    poolSize: opts.poolSize,
    poolBrowsersAtStart: opts.poolBrowsersAtStart,
    iterations: iterations.map((it) => ({ ...it, create: round(it.create), connect: round(it.connect), navigate: round(it.navigate), release: round(it.release), gone: round(it.gone) })),
    phases: {
      create: summarize(pick((it) => it.create)),
      connect: summarize(pick((it) => it.connect)),
      navigate: summarize(pick((it) => it.navigate)),
      release: summarize(pick((it) => it.release)),
      gone: summarize(pick((it) => it.gone).filter((v) => !Number.isNaN(v))),
      total: summarize(pick((it) => it.create + it.connect + it.navigate + it.release)),
    },
    pooledCreates: pooledOnes.length,
    poolRefillWait: refillWaits.length ? summarize(refillWaits) : null,
    restWait: restWaits.length ? summarize(restWaits) : null,
    createPooled: both ? summarize(pick((it) => it.create, pooledOnes)) : null,
    createFresh: both ? summarize(pick((it) => it.create, freshOnes)) : null,
  };
}
