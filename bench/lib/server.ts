// Starts a real `caravan serve` child on its embedded defaults (fresh temp data dir, free
// ports), makes a bench project and key through the operator CLI, and stops it again.
import Browserbase from '@browserbasehq/sdk';
import { execFile, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { resolveProfileRoot } from '../../agent/launcher/profileRoot.ts';
import { progress } from './log.ts';
import { browsersUnder, isGone, launchersOf, listProcesses } from './procfs.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CARAVAN = path.join(ROOT, 'bin/caravan.js');
const TAIL_LINES = 60;

export interface BenchServer {
  label: string;
  url: string;
  pid: number;
  dataDir: string;
  /** Where its browsers' user-data dirs are (BROWSER_PROFILE_DIR resolved). */
  profilesDir: string;
  profilesInMemory: boolean;
  projectId: string;
  apiKey: string;
  env: Record<string, string>;
  sdk: Browserbase;
  /** The last lines the server (and its launchers) wrote on stdout (logs) and stderr. */
  stderrTail(): string;
  /** Non-empty once the server process has exited. */
  exitInfo(): string | undefined;
  stop(): Promise<void>;
}

export class ServerError extends Error {
  override name = 'ServerError';
  constructor(message: string, readonly tail: string) {
    super(message);
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function baseEnv(): Record<string, string> {
  const keep = ['PATH', 'HOME', 'LANG', 'TMPDIR', 'TZ'];
  return Object.fromEntries(keep.flatMap((k) => { const v = process.env[k]; return v ? [[k, v]] : []; }));
}

/** Runs an operator command (`node bin/caravan.js ...`); it prints one JSON object. */
function cli(args: string[]): Promise<unknown> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CARAVAN, ...args], { cwd: ROOT, env: baseEnv(), timeout: 30_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`caravan ${args.slice(0, 2).join(' ')} failed: ${stderr.trim() || err.message}`));
      try {
        resolve(JSON.parse(stdout.trim()));
      } catch {
        reject(new Error(`caravan ${args.slice(0, 2).join(' ')} printed no JSON: ${stdout.slice(0, 200)}`));
      }
    });
  });
}

const CreatedProject = z.object({ id: z.string() });
const CreatedKey = z.object({ key: z.string() });

/** Polls `fn` until it holds or `timeoutMs` passed; an exception counts as not yet. */
export async function until(fn: () => Promise<boolean> | boolean, timeoutMs: number, intervalMs = 50): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await Promise.resolve().then(fn).catch(() => false)) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export async function startServer(label: string, extraEnv: Record<string, string>): Promise<BenchServer> {
  const parentDir = await fs.mkdtemp(path.join(os.tmpdir(), 'caravan-bench-'));
  // Under root the embedded PostgreSQL runs as `postgres`, which must be able to enter the parent.
  await fs.chmod(parentDir, 0o755);
  const dataDir = path.join(parentDir, 'data');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const bootKey = `cvn_bench_${crypto.randomBytes(16).toString('hex')}`;
  const env: Record<string, string> = {
    CARAVAN_DATA_DIR: dataDir,
    DASHBOARD_PORT: String(port),
    AGENT_CDP_PORT: '0',
    AGENT_WEBDRIVER_PORT: '0',
    SERVICE_BOOTSTRAP_API_KEY: bootKey,
    SERVICE_BOOTSTRAP_PROJECT_ID: 'bench-bootstrap',
    LOG_LEVEL: 'warn',
    // Density runs 20 browsers at once (+ a pool); the default node capacity is 16.
    NODE_CAPACITY: '32',
    ...extraEnv,
  };
  const profiles = await resolveProfileRoot(env.BROWSER_PROFILE_DIR ?? 'auto', path.join(dataDir, 'browsers'), dataDir);
  const child = spawn(process.execPath, [CARAVAN, 'serve'], { cwd: ROOT, env: { ...baseEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  // pino logs (warn and above) go to stdout, crashes to stderr: keep the last lines of both.
  const tail: string[] = [];
  const partial = { out: '', err: '' };
  const collect = (stream: 'out' | 'err') => (d: Buffer) => {
    const lines = (partial[stream] + d.toString()).split('\n');
    partial[stream] = lines.pop() ?? '';
    tail.push(...lines.filter(Boolean));
    tail.splice(0, Math.max(0, tail.length - TAIL_LINES));
  };
  child.stdout.on('data', collect('out'));
  child.stderr.on('data', collect('err'));
  let exit: string | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exit = signal ? `killed by ${signal}` : `exited with code ${code}`;
      resolve();
    });
  });
  const stderrTail = () => [...tail, partial.out, partial.err].filter(Boolean).join('\n');
  if (child.pid === undefined) throw new ServerError(`could not spawn caravan serve (${label})`, stderrTail());
  const pid: number = child.pid;

  async function stop(): Promise<void> {
    if (!exit) {
      // SIGTERM while a launcher is still winding down a released session (browser closing,
      // its STOPPED report in flight) has been seen to hang the server's shutdown with a
      // database connection left idle in transaction. Every session is released by now, so
      // wait until only pooled and spare launchers (node children) are left.
      const idle = (Number(env.POOL_SIZE ?? 0) || 0) + Number(env.POOL_SPARE_LAUNCHERS ?? 1);
      const quiet = await until(() => launchersOf(pid).length <= idle, 20_000, 50);
      if (!quiet) progress(`${label}: launchers still winding down after 20 s; stopping anyway`);
      const t = performance.now();
      child.kill('SIGTERM');
      const timer = setTimeout(() => {
        progress(`${label}: caravan serve still running 30 s after SIGTERM; killing it. Its stderr tail:\n${stderrTail() || '(empty)'}`);
        child.kill('SIGKILL');
      }, 30_000);
      await exited;
      clearTimeout(timer);
      progress(`${label} server stopped in ${Math.round(performance.now() - t)} ms (${exit ?? 'exited'})`);
    }
    // Nothing of this server may outlive it: browsers or PostgreSQL left behind under its
    // data dir (only processes this bench started name that temp dir) are killed by pid.
    for (const p of listProcesses()) {
      if (p.cmdline.some((a) => a.includes(dataDir) || a.includes(profiles.dir)) && !isGone(p.pid)) {
        progress(`${label}: killing leftover pid ${p.pid} (${p.comm})`);
        try { process.kill(p.pid, 'SIGKILL'); } catch { /* already gone */ }
      }
    }
    await fs.rm(parentDir, { recursive: true, force: true, maxRetries: 3 });
    await fs.rm(profiles.dir, { recursive: true, force: true, maxRetries: 3 });
  }

  const t0 = performance.now();
  const up = await until(async () => {
    if (exit) return true;
    const res = await fetch(`${url}/v1/projects`, { headers: { 'x-svc-api-key': bootKey }, signal: AbortSignal.timeout(2_000) });
    return res.ok;
  }, 90_000, 100);
  if (exit || !up) {
    const why = exit ? `caravan serve ${exit} during start` : 'caravan serve did not answer within 90 s';
    await stop();
    throw new ServerError(`${label} server failed to start: ${why}`, stderrTail());
  }
  progress(`${label} server up at ${url} in ${Math.round(performance.now() - t0)} ms (pid ${pid}, ${Object.entries(extraEnv).map(([k, v]) => `${k}=${v}`).join(' ') || 'defaults'})`);

  try {
    const project = CreatedProject.parse(await cli(['project', 'create', '--name', 'bench', '--concurrency', '40', '--url', url]));
    const { key } = CreatedKey.parse(await cli(['apikey', 'create', '--project', project.id, '--url', url]));
    const sdk = new Browserbase({ apiKey: key, baseURL: url, maxRetries: 0, timeout: 120_000, defaultHeaders: { 'x-svc-api-key': key } });
    return { label, url, pid, dataDir, profilesDir: profiles.dir, profilesInMemory: profiles.inMemory, projectId: project.id, apiKey: key, env, sdk, stderrTail, exitInfo: () => exit, stop };
  } catch (err) {
    await stop();
    throw new ServerError(`${label} server: ${err instanceof Error ? err.message : String(err)}`, stderrTail());
  }
}

export interface Created {
  id: string;
  connectUrl: string;
}

/** POST /v1/sessions through the SDK; a failure names the server state and keeps its log tail. */
export async function createSession(server: BenchServer, keepAlive = false): Promise<Created> {
  try {
    const s = await server.sdk.sessions.create({ projectId: server.projectId, ...(keepAlive ? { keepAlive } : {}) });
    return { id: s.id, connectUrl: s.connectUrl };
  } catch (err) {
    const state = server.exitInfo() ? ` (the server ${server.exitInfo()})` : '';
    throw new ServerError(`session create failed on the ${server.label} server${state}: ${err instanceof Error ? err.message : String(err)}`, server.stderrTail());
  }
}

export async function releaseSession(server: BenchServer, id: string): Promise<void> {
  await server.sdk.sessions.update(id, { projectId: server.projectId, status: 'REQUEST_RELEASE' });
}

/** Browsers of this server (their user-data dirs lie in its profiles dir). */
export const serverBrowsers = (server: BenchServer) => browsersUnder(server.profilesDir);
