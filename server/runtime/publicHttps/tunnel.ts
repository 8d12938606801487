// The public HTTPS entrypoint: a supervised quick-tunnel child (`<bin> tunnel --url <target>
// --no-autoupdate`) whose output is watched for its public https URL. It restarts after a
// runtime exit, never after a failed spawn (missing binary), and is stopped with SIGTERM, then
// SIGKILL after a grace period.
import { spawn, type ChildProcess } from 'node:child_process';
import readline from 'node:readline';
import type { Logger } from 'pino';
import type { PublicHttpsState, PublicHttpsStatus, RuntimeAction } from '../../../schema/runtime.ts';
import type { Clock } from '../../deps.ts';
import type { Advertiser } from './advertise.ts';

/** The reference choice: the first quick-tunnel URL printed by the child. */
export const TUNNEL_URL = /https:\/\/[a-z0-9-]+\.trycloudflare\.com/;
export const PROVIDER = 'cloudflared-quick-tunnel';

export type ActionInput = Pick<RuntimeAction, 'name' | 'category' | 'message' | 'detail'>;

export interface PublicHttpsOptions {
  enabled: boolean;
  /** Read when the child starts (the listener's port is known by then). */
  targetUrl: () => string;
  bin: string;
  /** Environment of the child (no secrets: see server/config.ts inheritedEnv). */
  env: Record<string, string>;
  /** Delay before a restart after the child exited (default 5 s). */
  retryDelayMs?: number;
  /** SIGKILL this long after SIGTERM when the child has not exited (default 3 s). */
  killAfterMs?: number;
  log: Logger;
  clock: Clock;
  action(a: ActionInput): void;
  advertiser: Advertiser;
  /** What to advertise once a URL exists: the instance name and the local port. */
  advertisement(): { name: string; port: number };
}

export interface PublicHttps {
  state(): PublicHttpsState;
  /** The tunnel's host name (lower case) once the public URL is known. */
  publicHost(): string | undefined;
  /** Starts the child when enabled; a no-op when disabled or already started. */
  start(): void;
  /** Stops the child (SIGTERM, then SIGKILL) and the advertisement; resolves once it exited. */
  stop(): Promise<void>;
  /** Calls `fn` after every state change; returns the unsubscribe function. */
  onChange(fn: (s: PublicHttpsState) => void): () => void;
}

interface Child {
  proc: ChildProcess;
  /** Resolves once the process is gone (exit, or a spawn that never produced one). */
  gone: Promise<void>;
  alive: boolean;
}

export function createPublicHttps(opts: PublicHttpsOptions): PublicHttps {
  const log = opts.log.child({ component: 'public-https' });
  const retryDelayMs = opts.retryDelayMs ?? 5_000;
  const killAfterMs = opts.killAfterMs ?? 3_000;
  let s: PublicHttpsState = {
    enabled: opts.enabled,
    provider: PROVIDER,
    status: opts.enabled ? 'idle' : 'disabled',
    targetUrl: opts.targetUrl(),
    publicUrl: '',
    pid: 0,
    startedAt: '',
    lastError: '',
  };
  const listeners = new Set<(s: PublicHttpsState) => void>();
  let child: Child | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let started = false;
  let stopping = false;

  function set(patch: Partial<PublicHttpsState>): void {
    s = { ...s, ...patch };
    for (const fn of listeners) fn(s);
  }

  function fail(message: string, retry: boolean): void {
    log.warn({ retry, retryDelayMs }, message);
    set({ status: 'error', lastError: message, publicUrl: '', pid: 0 });
    opts.action({ name: 'bot_error', category: 'error', message, detail: { source: 'public_https', retry } });
    void opts.advertiser.unpublish().catch((err) => log.warn({ err }, 'could not withdraw the mDNS advertisement'));
    if (retry && !stopping) {
      retryTimer = setTimeout(() => {
        retryTimer = undefined;
        launch();
      }, retryDelayMs);
      retryTimer.unref();
    }
  }

  function onLine(c: Child, line: string): void {
    if (c !== child || !c.alive || stopping) return;
    const url = TUNNEL_URL.exec(line)?.[0];
    if (url && !s.publicUrl) {
      set({ status: 'ready', publicUrl: url, lastError: '' });
      log.info({ publicUrl: url }, 'public HTTPS entrypoint ready');
      opts.action({ name: 'public_https_entrypoint_ready', category: 'bot_runtime', message: `public HTTPS entrypoint ready at ${url}`, detail: { publicUrl: url } });
      const ad = opts.advertisement();
      void opts.advertiser.publish({ ...ad, txt: { tunnelUrl: url } }).catch((err) => log.warn({ err }, 'mDNS advertisement failed'));
    } else if (/registered tunnel connection/i.test(line)) {
      log.info('tunnel connection registered');
    }
  }

  function watch(c: Child, stream: NodeJS.ReadableStream | null): void {
    if (!stream) return;
    stream.on('error', (err: Error) => {
      if (c === child && !stopping) opts.action({ name: 'bot_error', category: 'error', message: `reading the tunnel output failed: ${err.message}`, detail: { source: 'public_https' } });
    });
    // Only the start of a line is searched: the URL is short, log lines may not be.
    const rl = readline.createInterface({ input: stream, crlfDelay: Infinity });
    rl.on('line', (line: string) => onLine(c, line.slice(0, 4096)));
  }

  function launch(): void {
    if (stopping) return;
    const targetUrl = opts.targetUrl();
    const argv = ['tunnel', '--url', targetUrl, '--no-autoupdate'];
    const proc = spawn(opts.bin, argv, { env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let resolveGone!: () => void;
    const c: Child = { proc, alive: proc.pid !== undefined, gone: new Promise((r) => (resolveGone = r)) };
    child = c;
    set({ status: 'starting', targetUrl, pid: proc.pid ?? 0, startedAt: new Date(opts.clock.now()).toISOString(), publicUrl: '' });
    opts.action({ name: 'public_https_entrypoint_starting', category: 'bot_runtime', message: `starting ${opts.bin} for ${targetUrl}`, detail: { targetUrl, pid: s.pid } });
    watch(c, proc.stdout);
    watch(c, proc.stderr);
    let ended = false;
    const end = (message: string, retry: boolean) => {
      if (ended) return;
      ended = true;
      c.alive = false;
      resolveGone();
      if (child !== c || stopping) return;
      fail(message, retry);
    };
    proc.on('error', (err: NodeJS.ErrnoException) => {
      // A spawn that failed (ENOENT: missing binary, EACCES: not executable) is a configuration
      // problem: no retry until the operator fixes it and restarts.
      if (err.code === 'ENOENT') end(`tunnel binary "${opts.bin}" not found (ENOENT): install cloudflared or set PUBLIC_HTTPS_TUNNEL_BIN`, false);
      else if (!c.alive || err.code === 'EACCES') end(`tunnel binary "${opts.bin}" could not be started: ${err.message}`, false);
      else log.warn({ err }, 'tunnel child error');
    });
    proc.on('exit', (code, signal) => end(`tunnel exited unexpectedly (${signal ? `signal ${signal}` : `code ${code}`})`, true));
  }

  return {
    state: () => s,
    publicHost() {
      if (!s.publicUrl) return undefined;
      return new URL(s.publicUrl).hostname.toLowerCase();
    },
    start() {
      if (!opts.enabled || started) return;
      started = true;
      launch();
    },
    async stop() {
      stopping = true;
      if (retryTimer) clearTimeout(retryTimer);
      retryTimer = undefined;
      await opts.advertiser.unpublish().catch(() => undefined);
      await opts.advertiser.close().catch(() => undefined);
      const c = child;
      if (c?.alive) {
        c.proc.kill('SIGTERM');
        const killer = setTimeout(() => {
          log.warn({ pid: c.proc.pid }, 'tunnel did not exit after SIGTERM; sending SIGKILL');
          c.proc.kill('SIGKILL');
        }, killAfterMs);
        await c.gone;
        clearTimeout(killer);
      }
      const status: PublicHttpsStatus = opts.enabled ? 'stopped' : 'disabled';
      if (s.status !== status || s.pid !== 0) set({ status, pid: 0, publicUrl: '' });
    },
    onChange(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
  };
}
