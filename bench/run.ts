// `npm run bench`: starts Caravan on its embedded defaults (cold: POOL_SIZE=0, warm: POOL_SIZE=2,
// and cold without a spare launcher: POOL_SIZE=0 POOL_SPARE_LAUNCHERS=0),
// measures lifecycle, proxy cost, density and API throughput, prints Markdown, writes JSON.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runApi } from './lib/api.ts';
import { parseOptions, USAGE, type BenchOptions } from './lib/args.ts';
import { controlPlaneMiB, runDensity } from './lib/density.ts';
import { runLifecycle } from './lib/lifecycle.ts';
import { progress } from './lib/log.ts';
import { servePage } from './lib/page.ts';
import { probe, waitForPool } from './lib/probe.ts';
import { runProxy } from './lib/proxy.ts';
import { loadAverage, machine, markdown, type BenchResults } from './lib/report.ts';
import { ROOT, ServerError, startServer, type BenchServer } from './lib/server.ts';
import { defaultChromePath } from '../agent/launcher/chromePath.ts';

const WARM_POOL_SIZE = 2;

function resultFile(opts: BenchOptions): string {
  const name = opts.chrome?.includes('headless-shell') ? 'latest-headless-shell.json' : 'latest.json';
  return path.join(ROOT, 'bench/results', name);
}

async function main(): Promise<number> {
  let opts: BenchOptions;
  try {
    opts = parseOptions(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n${USAGE}\n`);
    return 2;
  }
  const chromePath = opts.chrome ?? defaultChromePath();
  try {
    await fs.access(chromePath, fs.constants.X_OK);
  } catch {
    process.stderr.write(`bench: no executable browser at ${chromePath} (pass --chrome PATH)\n`);
    return 2;
  }
  const serverEnv: Record<string, string> = { ...(opts.chrome ? { CHROME_PATH: opts.chrome } : {}), BROWSER_PROFILE_DIR: opts.profiles };
  const started = performance.now();
  const loadAtStart = loadAverage();
  if (loadAtStart > os.cpus().length) progress(`warning: load average ${loadAtStart} on ${os.cpus().length} cores before the run; numbers will be noisy`);
  const running = new Set<BenchServer>();
  const stopAll = () => Promise.all([...running].map((s) => s.stop().catch(() => undefined).then(() => running.delete(s))));
  process.once('SIGINT', () => {
    progress('interrupted: stopping servers');
    void stopAll().then(() => process.exit(130));
  });

  const page = await servePage();
  const results: BenchResults = {
    machine: machine('unknown', chromePath, loadAtStart),
    options: { iterations: opts.iterations, only: [...opts.only], chrome: opts.chrome ?? null, profiles: opts.profiles },
    durationSeconds: 0,
    lifecycle: {},
    notes: [],
  };
  const { only } = opts;
  try {
    // Cold server (no pool): cold lifecycle, proxy, density, API.
    const cold = await startServer('cold', { ...serverEnv, POOL_SIZE: '0' });
    running.add(cold);
    const version = await probe(cold);
    results.machine = machine(version.product, chromePath, loadAtStart);
    progress(`browser: ${version.product}`);
    results.notes.push(`browser profiles (user-data dirs): ${cold.profilesInMemory ? 'in memory' : 'on disk'}, ${cold.profilesDir} (BROWSER_PROFILE_DIR=${opts.profiles}); HTTP and code caches on disk.`);
    // The control plane's memory after start and one session, before any load.
    const idleMiB = controlPlaneMiB(cold);
    if (only.has('lifecycle')) {
      results.lifecycle.cold = await runLifecycle(cold, { mode: 'cold', poolSize: 0, spares: 1, poolBrowsersAtStart: 0, iterations: opts.iterations, pageUrl: page.url });
    }
    if (only.has('proxy')) {
      results.proxy = await runProxy(cold, { chromePath });
      results.notes.push(`proxy: ${results.proxy.directNote}; the proxied side connects to the session's /json/version webSocketDebuggerUrl (rewritten to the proxy, token in signingKey).`);
    }
    if (only.has('density')) results.density = await runDensity(cold, 20, idleMiB);
    if (only.has('api')) results.api = await runApi(cold);
    await cold.stop();
    running.delete(cold);

    // Cold without a spare launcher: every session also waits for Node to start its launcher.
    if (only.has('lifecycle')) {
      const bare = await startServer('bare', { ...serverEnv, POOL_SIZE: '0', POOL_SPARE_LAUNCHERS: '0' });
      running.add(bare);
      await probe(bare);
      results.lifecycle.bare = await runLifecycle(bare, { mode: 'bare', poolSize: 0, spares: 0, poolBrowsersAtStart: 0, iterations: opts.iterations, pageUrl: page.url });
      await bare.stop();
      running.delete(bare);
      results.notes.push('cold: no started browser (POOL_SIZE=0); the default spare launcher (POOL_SPARE_LAUNCHERS=1: Node and the launcher code loaded, no browser) takes each session and starts its Chromium. The row "without a spare launcher" turns that off too.');
    }

    // Warm server (pool of pre-started browsers): warm lifecycle only.
    if (only.has('lifecycle')) {
      const warm = await startServer('warm', { ...serverEnv, POOL_SIZE: String(WARM_POOL_SIZE) });
      running.add(warm);
      await probe(warm);
      const poolAtStart = await waitForPool(warm, WARM_POOL_SIZE, 10_000);
      results.lifecycle.warm = await runLifecycle(warm, { mode: 'warm', poolSize: WARM_POOL_SIZE, spares: 1, poolBrowsersAtStart: poolAtStart, iterations: opts.iterations, pageUrl: page.url });
      await warm.stop();
      running.delete(warm);
      const w = results.lifecycle.warm;
      if (poolAtStart === 0 && w.pooledCreates === 0) {
        results.notes.push(`warm: no pooled browser was seen (none running before the first create, none older than its create): this server does not pool with POOL_SIZE=${WARM_POOL_SIZE}, so warm measures the same as cold.`);
      } else {
        results.notes.push(`warm: ${poolAtStart} pooled browsers were running before the first timed create; ${w.pooledCreates}/${w.iterations.length} creates got a browser that was started before the create was sent (process start time from /proc).`);
      }
    }
    results.notes.push('lifecycle: one untimed session per server first (warm-up, browser version); each iteration starts once the previous browser process has exited and the node is at rest again (warm: the pool full and answering CDP; cold: the previous launcher gone and the spare launchers back; both then 250 ms to settle; those waits are reported apart); create = sessions.create (waits for the browser), connect = connectOverCDP, navigate = goto a local page until load, release = sessions.update REQUEST_RELEASE.');
    if (only.has('density')) results.notes.push('density and API ran on the cold server (POOL_SIZE=0), so no pooled browser is counted.');
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`\nbench: FAILED: ${message}\n`);
    if (err instanceof ServerError && err.tail) process.stderr.write(`--- server output (last lines) ---\n${err.tail}\n---\n`);
    else for (const s of running) process.stderr.write(`--- ${s.label} server output (last lines) ---\n${s.stderrTail() || '(empty)'}\n---\n`);
    await stopAll();
    await page.close();
    return 1;
  }
  await page.close();
  results.durationSeconds = Math.round((performance.now() - started) / 1000);
  results.machine.loadAverage.end = loadAverage();
  const file = resultFile(opts);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, JSON.stringify(results, null, 2) + '\n');
  process.stdout.write(markdown(results) + '\n');
  progress(`done in ${results.durationSeconds} s; results in ${path.relative(ROOT, file)}`);
  return 0;
}

process.exitCode = await main();
