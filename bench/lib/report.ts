// The results document (also written as JSON) and its Markdown rendering.
import os from 'node:os';
import type { ApiResult } from './api.ts';
import type { DensityResult } from './density.ts';
import { PHASES, type LifecycleResult } from './lifecycle.ts';
import type { ProxyResult } from './proxy.ts';

export interface Machine {
  cores: number;
  memoryGiB: number;
  cpuModel: string;
  chromium: string;
  chromePath: string;
  node: string;
  os: string;
  date: string;
  /** 1-minute load average when the run started and when it ended (other work on the machine). */
  loadAverage: { start: number; end: number };
}

export interface BenchResults {
  machine: Machine;
  options: { iterations: number; only: string[]; chrome: string | null; profiles: string };
  durationSeconds: number;
  /** cold: POOL_SIZE=0 with the default spare launcher; bare: POOL_SIZE=0 and POOL_SPARE_LAUNCHERS=0. */
  lifecycle: { cold?: LifecycleResult; bare?: LifecycleResult; warm?: LifecycleResult };
  proxy?: ProxyResult;
  density?: DensityResult;
  api?: ApiResult;
  notes: string[];
}

export const loadAverage = (): number => Math.round((os.loadavg()[0] ?? 0) * 100) / 100;

export function machine(chromium: string, chromePath: string, loadAtStart: number): Machine {
  const cpus = os.cpus();
  return {
    cores: cpus.length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    chromium,
    chromePath,
    node: process.version,
    os: `${os.type()} ${os.release()}`,
    date: new Date().toISOString(),
    loadAverage: { start: loadAtStart, end: loadAtStart },
  };
}

const ms = (v: number | undefined) => (v === undefined || Number.isNaN(v) ? '–' : `${Math.round(v)}`);

function lifecycleTable(cold: LifecycleResult | undefined, warm: LifecycleResult | undefined, bare: LifecycleResult | undefined): string[] {
  const n = cold?.iterations.length ?? warm?.iterations.length ?? 0;
  const rows = [
    `### Session lifecycle (ms, ${n} iterations per mode, back to back)`,
    '',
    '| Phase | cold median | cold p95 | warm median | warm p95 |',
    '|---|---:|---:|---:|---:|',
  ];
  const row = (label: string, key: keyof LifecycleResult['phases']) =>
    `| ${label} | ${ms(cold?.phases[key].median)} | ${ms(cold?.phases[key].p95)} | ${ms(warm?.phases[key].median)} | ${ms(warm?.phases[key].p95)} |`;
  for (const p of PHASES) rows.push(row(p, p));
  rows.push(row('**sum of the four**', 'total'));
  rows.push(row('release → browser process gone (not in the sum)', 'gone'));
  if (cold?.restWait) rows.push(`| wait until the node is at rest before each create (previous launcher gone, spare loaded; not in the sum) | ${ms(cold.restWait.median)} | ${ms(cold.restWait.p95)} | | |`);
  if (bare) {
    rows.push(`| cold create without a spare launcher (\`POOL_SPARE_LAUNCHERS=0\`: Node starts per session) | ${ms(bare.phases.create.median)} | ${ms(bare.phases.create.p95)} | | |`);
    rows.push(`| its sum of the four | ${ms(bare.phases.total.median)} | ${ms(bare.phases.total.p95)} | | |`);
  }
  if (warm) {
    rows.push(`| warm creates served by a pooled browser | | | ${warm.pooledCreates}/${warm.iterations.length} | |`);
    if (warm.poolRefillWait) rows.push(`| wait until the pool is full and ready before each create (refill; not in the sum) | | | ${ms(warm.poolRefillWait.median)} | ${ms(warm.poolRefillWait.p95)} |`);
    if (warm.createPooled && warm.createFresh) {
      rows.push(`| warm create, pooled browser | | | ${ms(warm.createPooled.median)} | ${ms(warm.createPooled.p95)} |`);
      rows.push(`| warm create, fresh browser | | | ${ms(warm.createFresh.median)} | ${ms(warm.createFresh.p95)} |`);
    }
  }
  return rows;
}

function otherTable(r: BenchResults): string[] {
  const rows = ['### Proxy, density, API', '', '| Measure | Value |', '|---|---:|'];
  if (r.proxy) {
    const p = r.proxy;
    const directLabel = p.direct === 'same-browser' ? 'direct (same browser, own port)' : 'direct (bare Chromium)';
    rows.push(
      `| CDP round trips/s (Runtime.evaluate, ${p.rounds.length} alternating blocks of ${p.calls} sequential calls), proxied, via ${p.relay} | ${Math.round(p.proxiedRps)} |`,
      `| CDP round trips/s, ${directLabel} | ${Math.round(p.directRps)} |`,
      `| round-trip rate ratio proxied/direct (median of the ${p.rounds.length} blocks' ratios) | ${p.rpsRatio.toFixed(2)} |`,
      `| 10 MB result (returnByValue), proxied | ${ms(p.proxiedBigMs)} ms (${Math.round(p.proxiedMBps)} MB/s) |`,
      `| 10 MB result, ${directLabel} | ${ms(p.directBigMs)} ms (${Math.round(p.directMBps)} MB/s) |`,
      `| throughput ratio proxied/direct | ${p.throughputRatio.toFixed(2)} |`,
    );
  }
  if (r.density) {
    const d = r.density;
    rows.push(
      `| idle keepAlive sessions at once | ${d.browsersFound}/${d.sessions} (created in ${d.createSeconds} s, 4 at a time) |`,
      `| browser PSS per session (process tree, median; min–max) | ${d.browserMiB.median} MiB (${d.browserMiB.min}–${d.browserMiB.max}) |`,
      `| launcher PSS per session (node process, median) | ${d.launcherMiB.median} MiB |`,
      `| profile (user-data dir) per session, ${d.profileMiB.inMemory ? 'in memory (tmpfs)' : 'on disk'}, median | ${d.profileMiB.median} MiB |`,
      `| per session, browser + launcher${d.profileMiB.inMemory ? ' + profile' : ''} | ${d.perSessionMiB} MiB |`,
      `| processes per browser | ${d.processesPerBrowser} |`,
      `| control plane + agent PSS, after start → with ${d.sessions} sessions | ${d.controlPlaneMiB.idle} → ${d.controlPlaneMiB.loaded} MiB |`,
      `| embedded PostgreSQL PSS (all its processes) | ${d.postgresMiB} MiB |`,
    );
  }
  if (r.api) {
    const a = r.api;
    rows.push(
      `| ${a.endpoint}, ${a.connections} keep-alive connections, ${Math.round(a.seconds)} s | ${Math.round(a.rps)} req/s |`,
      `| latency p50 / p99 | ${a.p50Ms} / ${a.p99Ms} ms |`,
      `| errors | ${a.errors} of ${a.requests} |`,
    );
  }
  return rows.length > 4 ? rows : [];
}

export function markdown(r: BenchResults): string {
  const m = r.machine;
  const out = [
    `## Caravan bench, ${m.date.slice(0, 16).replace('T', ' ')} UTC`,
    '',
    `${m.cores} cores (${m.cpuModel}), ${m.memoryGiB} GiB, ${m.chromium} (${m.chromePath}), Node ${m.node}, ${m.os}; run took ${Math.round(r.durationSeconds)} s; load average ${m.loadAverage.start} at start, ${m.loadAverage.end} at end`,
    '',
  ];
  if (r.lifecycle.cold || r.lifecycle.warm) out.push(...lifecycleTable(r.lifecycle.cold, r.lifecycle.warm, r.lifecycle.bare), '');
  const other = otherTable(r);
  if (other.length) out.push(...other, '');
  if (r.notes.length) out.push(...r.notes.map((n) => `- ${n}`), '');
  return out.join('\n');
}
