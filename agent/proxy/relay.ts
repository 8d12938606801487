// Moves the bytes of an upgraded connection between its client and the browser, once the
// proxy has checked the token and the browser has accepted the WebSocket handshake.
//
// Two ways: Node's stream pipes (always there, and the only one for TLS clients), or socat
// (Debian's `socat`) handed both sockets' descriptors. Piped through Node every CDP message
// wakes this process's event loop and crosses into JavaScript twice per round trip; socat moves
// them in C without Node. Measured on a 2-core VM: sequential Runtime.evaluate round trips at
// 0.89-0.98 of direct through socat, 0.78-0.88 through Node (bench/, docs/decisions.md).
import { fork, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { SpawnerReport, type SpawnerRequest } from '../../schema/agent.ts';

export type RelayKind = 'socat' | 'node';
/** `AGENT_RELAY`: `auto` uses socat when it is installed. */
export type RelayMode = 'auto' | RelayKind;

export interface Relay {
  /** Bytes in and out of the client's connection so far (the handshake included). */
  bytes(): number;
  /** Ends the connection on both sides. */
  close(): void;
  /** Resolves once the connection is over and the relay has let go of it. */
  readonly done: Promise<void>;
}

/** socat's copy buffer: one read moves up to this much (its default, 8 KiB, costs syscalls on big results). */
const SOCAT_BUFFER = 262_144;

/** How long the other side may still flush after one side closed (Node relay). */
const FLUSH_AFTER_CLOSE_MS = 1_000;

/**
 * The socat to use: `AGENT_RELAY=node` none; `socat` the one on PATH, or an error saying how to
 * install it; `auto` (default) the one on PATH if it runs, else none.
 */
export function findSocat(mode: RelayMode, envPath: string): string | undefined {
  if (mode === 'node') return undefined;
  for (const dir of envPath.split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, 'socat');
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
    } catch {
      continue;
    }
    if (spawnSync(candidate, ['-V'], { stdio: 'ignore', timeout: 5_000 }).status === 0) return candidate;
  }
  if (mode === 'socat') throw new Error('AGENT_RELAY=socat but no working socat is on PATH: install it (apt-get install socat) or set AGENT_RELAY=auto');
  return undefined;
}

interface ReadHandle {
  reading: boolean;
  readStop(): number;
}

/**
 * Stops Node from reading a socket (libuv read stop) that goes to another process next, so that
 * bytes the peer sends stay in the kernel for it. A paused stream alone keeps reading ahead into
 * its buffer. Not undone by a later pipe() or resume(): only for a socket this process lets go of.
 */
export function holdReads(socket: Duplex): void {
  const handle = (socket as unknown as { _handle?: Partial<ReadHandle> | null })._handle;
  if (handle?.reading && typeof handle.readStop === 'function') {
    handle.reading = false;
    handle.readStop();
  }
}

/** Whether a socket can be handed to another process: plain TCP (not TLS), nothing read ahead. */
export function canHandOver(client: Duplex, upstream: net.Socket): client is net.Socket {
  return client instanceof net.Socket && !('encrypted' in client) && client.readableLength === 0 && upstream.readableLength === 0
    && typeof (client as unknown as { _handle?: { fd?: number } })._handle?.fd === 'number';
}

export interface NodeRelay extends Relay {
  /** Stops relaying without touching the sockets (their listeners and pipes are removed), so
   *  that another relay can take them; `done` then never resolves. */
  detach(): void;
}

/** Both directions through Node's streams; when one side closes, the other may flush, then goes. */
export function nodeRelay(client: Duplex, upstream: net.Socket): NodeRelay {
  const clientSocket = client as net.Socket;
  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });
  // The connection is over for its client as soon as either side closes.
  const onClose = (other: Duplex) => () => {
    resolveDone();
    if (other.destroyed) return;
    other.end();
    setTimeout(() => other.destroy(), FLUSH_AFTER_CLOSE_MS).unref();
  };
  const onClientClose = onClose(upstream);
  const onUpstreamClose = onClose(client);
  client.once('close', onClientClose);
  upstream.once('close', onUpstreamClose);
  upstream.pipe(client);
  client.pipe(upstream);
  return {
    bytes: () => (clientSocket.bytesRead ?? 0) + (clientSocket.bytesWritten ?? 0),
    close() {
      client.destroy();
      upstream.destroy();
    },
    done,
    detach() {
      client.off('close', onClientClose);
      upstream.off('close', onUpstreamClose);
      upstream.unpipe(client);
      client.unpipe(upstream);
    },
  };
}

/** When a connection relayed by Node first goes to socat (lateSocatRelay). */
export interface HandOverTiming {
  /** At the first gap of this long with no byte either way (default 50 ms). */
  quietMs?: number;
  /** Or this long after the start, quiet or not (default 2 s). */
  latestMs?: number;
}

/**
 * Node relays first, socat takes over once the connection is quiet. Starting socat takes a few
 * milliseconds (a shell and socat, spawned by the spawner); at the handshake that time fell on
 * the client's first commands, which waited in the kernel for it (a warm Playwright connect:
 * +26 ms over direct through socat, +11 ms through Node, measured). A CDP client's handshake is
 * a burst of round trips; after it socat starts while the connection idles, and everything
 * later runs through it. The handover is safe at any moment Node holds no byte: both sockets
 * stop being read (the kernel keeps what arrives), nothing is waiting to be written, then both
 * go to the spawner.
 */
export function lateSocatRelay(client: net.Socket, upstream: net.Socket, spawner: SocatSpawner, timing: HandOverTiming = {}): Relay {
  const quietMs = timing.quietMs ?? 50;
  const latestMs = timing.latestMs ?? 2_000;
  const node = nodeRelay(client, upstream);
  let current: Relay = node;
  let finished = false;
  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });
  const activity = () => quiet.refresh();
  const stopWatching = () => {
    clearTimeout(quiet);
    clearTimeout(latest);
    client.off('data', activity);
    upstream.off('data', activity);
  };
  const attempt = () => {
    if (finished || current !== node) return;
    if (client.destroyed || upstream.destroyed || !spawner.ready()) {
      stopWatching();
      return;
    }
    // Bytes Node read and has not written yet: try again once they are out.
    if (client.writableLength + upstream.writableLength + client.readableLength + upstream.readableLength > 0) {
      setTimeout(attempt, 5).unref();
      return;
    }
    // All in this tick: reads happen only in the event loop's poll phase, so none can come
    // between the check above and the stop.
    stopWatching();
    node.detach();
    holdReads(client);
    holdReads(upstream);
    current = spawner.relay(client, upstream);
    void current.done.then(resolveDone);
  };
  const quiet = setTimeout(attempt, quietMs).unref();
  const latest = setTimeout(attempt, latestMs).unref();
  client.on('data', activity);
  upstream.on('data', activity);
  void node.done.then(() => {
    if (current !== node) return;
    finished = true;
    stopWatching();
    resolveDone();
  });
  return {
    bytes: () => current.bytes(),
    close: () => current.close(),
    done,
  };
}

/** The relay's shell: socat with the sockets as fds 3 and 4, then the shell's own I/O counts,
 *  which include those of its reaped child (`wchar`: what socat wrote to both sockets). */
export const socatScript = `"$0" -b ${SOCAT_BUFFER} FD:3 FD:4; exec 3<&- 4<&-; cat /proc/$$/io`;

/** `wchar` of a /proc/<pid>/io text: bytes the process (and its reaped children) wrote. */
export function wcharOf(io: string): number | undefined {
  const m = /^wchar:\s*(\d+)$/m.exec(io);
  return m ? Number(m[1]) : undefined;
}

export interface SocatSpawner {
  /** Whether the spawner process is up; until then (and after it died) Node relays. */
  ready(): boolean;
  /** Resolves once it is up, or after `timeoutMs` (or its exit) without it. */
  whenReady(timeoutMs: number): Promise<boolean>;
  /** Hands an upgraded connection (its handshake answered) to socat. This process lets go of
   *  both sockets. */
  relay(client: net.Socket, upstream: net.Socket): Relay;
  stop(): Promise<void>;
}

/**
 * Starts the relay spawner (relaySpawner.ts, a small child process: forking this one for every
 * connection blocked its event loop for 15-60 ms). Byte counts: while socat runs, its own
 * /proc/<pid>/io (found as the shell's child, never a reused pid); at its end, the shell's.
 */
export function startSocatSpawner(socat: string, log: Logger): SocatSpawner {
  const entry = fileURLToPath(new URL('./relaySpawner.ts', import.meta.url));
  const child = fork(entry, [socat], {
    execArgv: ['--import', import.meta.resolve('tsx')],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'json',
  });
  let up = false;
  let markUp: () => void = () => undefined;
  const upOnce = new Promise<void>((resolve) => {
    markUp = resolve;
  });
  let nextId = 1;
  const live = new Map<number, { started(pid: number): void; ended(r: { wchar?: number; failed?: string; stderr?: string }): void }>();
  child.on('message', (raw: unknown) => {
    const r = SpawnerReport.safeParse(raw);
    if (!r.success) return;
    if (r.data.type === 'ready') {
      up = true;
      markUp();
      log.debug('socat relay spawner ready');
      return;
    }
    const entry = live.get(r.data.id);
    if (!entry) return;
    if (r.data.type === 'started') entry.started(r.data.pid);
    else {
      live.delete(r.data.id);
      entry.ended(r.data);
    }
  });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      up = false;
      if (code !== 0) log.warn({ code, signal }, 'socat relay spawner exited; new connections are relayed by Node');
      // Relays it started live on (their own process groups) but report nothing any more.
      for (const entry of live.values()) entry.ended({ failed: 'the relay spawner exited' });
      live.clear();
      resolve();
    });
  });
  child.on('error', (err) => log.warn({ err }, 'socat relay spawner could not start; connections are relayed by Node'));
  const comm = path.basename(fs.realpathSync(socat)).slice(0, 15);

  return {
    ready: () => up && child.connected,
    async whenReady(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([upOnce, exited, new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      })]);
      clearTimeout(timer);
      return up && child.connected;
    },
    relay(client, upstream) {
      const id = nextId++;
      const before = client.bytesRead + client.bytesWritten;
      let shell: number | undefined;
      let final: number | undefined;
      let moved = 0;
      let closeAsked = false;
      let resolveDone: () => void = () => undefined;
      const done = new Promise<void>((resolve) => {
        resolveDone = resolve;
      });
      const liveSocat = (): number | undefined => {
        if (shell === undefined) return undefined;
        const kids = readProc(`/proc/${shell}/task/${shell}/children`)?.trim().split(/\s+/).filter(Boolean) ?? [];
        return kids.map(Number).find((pid) => readProc(`/proc/${pid}/comm`)?.trim() === comm);
      };
      const kill = () => {
        const pid = liveSocat();
        try {
          // socat alone, so that its shell still reports what it moved; before it exists, the group.
          if (pid !== undefined) process.kill(pid, 'SIGTERM');
          else if (shell !== undefined) process.kill(-shell, 'SIGTERM');
        } catch {
          // already gone
        }
      };
      live.set(id, {
        started(pid) {
          shell = pid;
          if (closeAsked) kill();
        },
        ended(r) {
          if (r.wchar !== undefined) final = r.wchar;
          if (r.failed) log.warn({ reason: r.failed }, 'socat relay failed');
          else if (r.stderr) log.debug({ stderr: r.stderr.slice(-500) }, 'socat relay ended with output');
          resolveDone();
        },
      });
      const request = (m: SpawnerRequest, socket: net.Socket) => child.send(m, socket, (err: Error | null) => {
        if (!err) return;
        log.warn({ err }, 'a connection could not be handed to the relay spawner');
        socket.destroy();
        live.get(id)?.ended({ failed: err.message });
        live.delete(id);
      });
      request({ type: 'client', id }, client);
      request({ type: 'upstream', id }, upstream);
      return {
        bytes() {
          if (final !== undefined) return before + final;
          const pid = liveSocat();
          const wchar = pid === undefined ? undefined : wcharOf(readProc(`/proc/${pid}/io`) ?? '');
          if (wchar !== undefined) moved = Math.max(moved, wchar);
          return before + moved;
        },
        close() {
          if (final !== undefined) return;
          closeAsked = true;
          kill();
        },
        done,
      };
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.disconnect();
        await exited;
      }
    },
  };
}

function readProc(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
