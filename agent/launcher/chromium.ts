// Starts one headless Chromium with CDP on a loopback port and closes it cleanly (Browser.close over CDP).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import type { Logger } from 'pino';
import WebSocket from 'ws';
import type { Viewport } from '../../schema/agent.ts';

/** Flags every session browser gets; CDP listens on 127.0.0.1 (Chromium's default) on a free port. */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
  '--remote-debugging-port=0',
];

export const DEFAULT_VIEWPORT: Viewport = { width: 1280, height: 720 };

export interface LaunchOptions {
  chromePath: string;
  /** A fresh, existing directory; DevToolsActivePort appears in it. */
  userDataDir: string;
  viewport?: Viewport;
  log: Logger;
  /** Start-to-CDP-answering limit; default 30 s. */
  timeoutMs?: number;
  extraArgs?: string[];
  signal?: AbortSignal;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Chromium {
  pid: number;
  /** CDP port on 127.0.0.1. */
  port: number;
  /** `/devtools/browser/<uuid>`. */
  wsPath: string;
  /** `Browser` of /json/version, e.g. `Chrome/156.0.8078.79`. */
  version: string;
  /** Resolves when the browser process has exited, for whatever reason. */
  exited: Promise<Exit>;
  running(): boolean;
  /** Browser.close over CDP, then SIGKILL if it is not gone within `timeoutMs` (default 5 s). */
  close(timeoutMs?: number): Promise<Exit>;
  kill(): void;
}

export class LaunchError extends Error {
  override name = 'LaunchError';
}

/** Parses DevToolsActivePort: line 1 the port, line 2 the browser websocket path. */
export function parseActivePort(text: string): { port: number; wsPath: string } | undefined {
  const [portLine, pathLine] = text.split('\n').map((l) => l.trim());
  const port = Number(portLine);
  if (!Number.isInteger(port) || port <= 0 || port > 65535 || !pathLine?.startsWith('/devtools/browser/')) return undefined;
  return { port, wsPath: pathLine };
}

export async function launchChromium(opts: LaunchOptions): Promise<Chromium> {
  const log = opts.log.child({ component: 'chromium' });
  const viewport = opts.viewport ?? DEFAULT_VIEWPORT;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const t0 = performance.now();
  if (opts.signal?.aborted) throw new LaunchError('launch aborted');
  const args = [
    ...CHROMIUM_FLAGS,
    `--user-data-dir=${opts.userDataDir}`,
    `--window-size=${viewport.width},${viewport.height}`,
    ...(opts.extraArgs ?? []),
    'about:blank',
  ];
  const child = spawn(opts.chromePath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const stderrTail: string[] = [];
  readline.createInterface({ input: child.stderr }).on('line', (line) => {
    stderrTail.push(line);
    if (stderrTail.length > 10) stderrTail.shift();
    log.debug({ line }, 'chromium stderr');
  });
  let spawnError: Error | undefined;
  child.once('error', (err) => {
    spawnError = err;
  });
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', () => resolve({ code: null, signal: null }));
  });

  const fail = (message: string): LaunchError => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    const tail = stderrTail.filter((l) => !/dbus|unexpected operator/i.test(l)).slice(-3).join(' | ');
    return new LaunchError(tail ? `${message}; stderr: ${tail}` : message);
  };

  // Everything that ends the wait early: exit, spawn error, timeout, abort.
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new Error(`Chromium did not answer on CDP within ${timeoutMs} ms`)), timeoutMs);
  const onAbort = () => abort.abort(new Error('launch aborted'));
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  void exited.then((e) => abort.abort(new Error(spawnError
    ? `Chromium could not be started: ${spawnError.message}`
    : `Chromium exited during start (${e.signal ?? `code ${e.code}`})`)));

  try {
    const active = await waitForActivePort(opts.userDataDir, abort.signal);
    const tPort = performance.now();
    const version = await waitForVersion(active.port, abort.signal);
    const tReady = performance.now();
    log.debug({ pid: child.pid, port: active.port, portFileMs: Math.round(tPort - t0), cdpMs: Math.round(tReady - t0) }, 'chromium answering on CDP');
    const pid = child.pid;
    if (pid === undefined) throw new Error('Chromium has no pid');
    return {
      pid,
      port: active.port,
      wsPath: active.wsPath,
      version,
      exited,
      running: () => child.exitCode === null && child.signalCode === null,
      close: (ms = 5_000) => closeBrowser(active.port, active.wsPath, exited, () => child.kill('SIGKILL'), ms, log),
      kill: () => {
        child.kill('SIGKILL');
      },
    };
  } catch (err) {
    throw fail(abort.signal.aborted && abort.signal.reason instanceof Error ? abort.signal.reason.message : err instanceof Error ? err.message : String(err));
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
  }
}

function abortable(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/** Watches the user-data dir for DevToolsActivePort, with a short poll as a fallback for missed events. */
async function waitForActivePort(dir: string, signal: AbortSignal): Promise<{ port: number; wsPath: string }> {
  const file = path.join(dir, 'DevToolsActivePort');
  let wake: () => void = () => undefined;
  let watcher: fs.FSWatcher | undefined;
  try {
    watcher = fs.watch(dir, () => wake());
    watcher.on('error', () => undefined);
  } catch {
    watcher = undefined;
  }
  const aborted = abortable(signal);
  aborted.catch(() => undefined);
  try {
    for (;;) {
      const found = await fs.promises.readFile(file, 'utf8').then(parseActivePort, () => undefined);
      if (found) return found;
      await Promise.race([
        new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 50);
        }),
        aborted,
      ]);
    }
  } finally {
    watcher?.close();
  }
}

/** Asks /json/version until the browser answers; returns its `Browser` field. */
async function waitForVersion(port: number, signal: AbortSignal): Promise<string> {
  const aborted = abortable(signal);
  aborted.catch(() => undefined);
  for (;;) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/json/version`, { signal: AbortSignal.any([signal, AbortSignal.timeout(2_000)]) });
      if (res.ok) {
        const body = (await res.json()) as { Browser?: unknown };
        return typeof body.Browser === 'string' ? body.Browser : 'unknown';
      }
    } catch (err) {
      if (signal.aborted) throw err;
    }
    await Promise.race([new Promise((r) => setTimeout(r, 20)), aborted]);
  }
}

/** Sends Browser.close on the browser websocket so the profile is flushed; kills after `timeoutMs`. */
async function closeBrowser(port: number, wsPath: string, exited: Promise<Exit>, kill: () => void, timeoutMs: number, log: Logger): Promise<Exit> {
  const timer = setTimeout(() => {
    log.warn({ timeoutMs }, 'browser did not close in time; killing it');
    kill();
  }, timeoutMs);
  let gone = false;
  try {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${wsPath}`, { perMessageDeflate: false });
    ws.on('open', () => ws.send(JSON.stringify({ id: 1, method: 'Browser.close' })));
    ws.on('error', (err) => {
      if (gone) return;
      log.warn({ err }, 'Browser.close over CDP failed; killing the browser');
      kill();
    });
    void exited.then(() => {
      gone = true;
      ws.terminate();
    });
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}

/** Sends CDP commands in order over one browser-level connection; returns their results. */
export async function cdpCommands(port: number, wsPath: string, commands: Array<(prev: unknown) => { method: string; params?: object }>, timeoutMs = 5_000): Promise<unknown[]> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}${wsPath}`, { perMessageDeflate: false });
  const results: unknown[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    let prev: unknown;
    for (const [i, make] of commands.entries()) {
      const { method, params } = make(prev);
      prev = await new Promise<unknown>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${method} did not answer within ${timeoutMs} ms`)), timeoutMs);
        const onMessage = (data: WebSocket.RawData) => {
          const msg = JSON.parse(data.toString()) as { id?: number; result?: unknown; error?: { message: string } };
          if (msg.id !== i + 1) return;
          clearTimeout(timer);
          ws.off('message', onMessage);
          if (msg.error) reject(new Error(`${method}: ${msg.error.message}`));
          else resolve(msg.result);
        };
        ws.on('message', onMessage);
        ws.send(JSON.stringify({ id: i + 1, method, params: params ?? {} }));
      });
      results.push(prev);
    }
    return results;
  } finally {
    ws.terminate();
  }
}

/** Resizes the window of the browser's first page: how a pooled browser takes a session's viewport. */
export async function setViewport(browser: Pick<Chromium, 'port' | 'wsPath'>, viewport: Viewport): Promise<void> {
  await cdpCommands(browser.port, browser.wsPath, [
    () => ({ method: 'Target.getTargets' }),
    (prev) => {
      const page = (prev as { targetInfos: Array<{ targetId: string; type: string }> }).targetInfos.find((t) => t.type === 'page');
      if (!page) throw new Error('the browser has no page to size');
      return { method: 'Browser.getWindowForTarget', params: { targetId: page.targetId } };
    },
    (prev) => ({ method: 'Browser.setWindowBounds', params: { windowId: (prev as { windowId: number }).windowId, bounds: { width: viewport.width, height: viewport.height } } }),
  ]);
}
