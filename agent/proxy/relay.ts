// Moves the bytes of an upgraded connection between its client and the browser, once the
// proxy has checked the token and the browser has accepted the WebSocket handshake.
//
// Two ways: Node's stream pipes (always there, and the only one for TLS clients), or socat
// (Debian's `socat`) handed both sockets' descriptors. Piped through Node every CDP message
// wakes this process's event loop and crosses into JavaScript twice per round trip; socat moves
// them in C without Node. Measured on a 2-core VM: sequential Runtime.evaluate round trips at
// 0.89-0.98 of direct through socat, 0.78-0.88 through Node (bench/, docs/decisions.md).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';

export type RelayKind = 'socat' | 'node';
/** `AGENT_RELAY`: `auto` uses socat when it is installed. */
export type RelayMode = 'auto' | RelayKind;

export interface Relay {
  readonly kind: RelayKind;
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
 * Stops Node from reading a socket (libuv read stop), so that bytes the peer sends stay in the
 * kernel for whoever reads next; a later pipe() or resume() starts reading again. A paused
 * stream alone keeps reading ahead into its buffer.
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

/** Both directions through Node's streams; when one side closes, the other may flush, then goes. */
export function nodeRelay(client: Duplex, upstream: net.Socket): Relay {
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
  client.once('close', onClose(upstream));
  upstream.once('close', onClose(client));
  upstream.pipe(client);
  client.pipe(upstream);
  return {
    kind: 'node',
    bytes: () => (clientSocket.bytesRead ?? 0) + (clientSocket.bytesWritten ?? 0),
    close() {
      client.destroy();
      upstream.destroy();
    },
    done,
  };
}

/**
 * Hands both sockets to a socat process and lets go of them here. socat runs under a small
 * shell that, once socat has exited, prints its own /proc/<pid>/io: the kernel adds a reaped
 * child's I/O to its parent's, so `wchar` there is exactly what socat wrote to both sockets.
 * While socat runs, its own /proc/<pid>/io gives the live count.
 */
export function socatRelay(socat: string, client: net.Socket, upstream: net.Socket, log: Logger): Relay {
  const before = client.bytesRead + client.bytesWritten;
  const script = `"$0" -b ${SOCAT_BUFFER} FD:3 FD:4; exec 3<&- 4<&-; cat /proc/$$/io`;
  // Its own process group: close() before socat is found still takes both down.
  const child = spawn('/bin/sh', ['-c', script, socat], { stdio: ['ignore', 'pipe', 'pipe', client, upstream], detached: true });
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    err = (err + d).slice(-2_000);
  });
  // The descriptors are the child's now: this process must not read or keep them.
  const letGo = () => {
    client.destroy();
    upstream.destroy();
  };
  child.once('spawn', letGo);
  let moved = 0;
  let final: number | undefined;
  // socat is the shell's child: found through the shell (never a reused pid of another process).
  const comm = path.basename(fs.realpathSync(socat)).slice(0, 15);
  const liveSocat = (): number | undefined => {
    if (child.pid === undefined) return undefined;
    const kids = readProc(`/proc/${child.pid}/task/${child.pid}/children`)?.trim().split(/\s+/).filter(Boolean) ?? [];
    return kids.map(Number).find((pid) => readProc(`/proc/${pid}/comm`)?.trim() === comm);
  };
  const done = new Promise<void>((resolve) => {
    child.once('error', (e) => {
      letGo();
      log.warn({ err: e }, 'socat relay could not start');
      resolve();
    });
    child.once('close', (code, signal) => {
      const wchar = /^wchar:\s*(\d+)$/m.exec(out);
      if (wchar) final = Number(wchar[1]);
      if (err.trim()) log.debug({ code, signal, stderr: err.trim().slice(-500) }, 'socat relay ended with output');
      resolve();
    });
  });
  return {
    kind: 'socat',
    bytes() {
      if (final !== undefined) return before + final;
      const pid = liveSocat();
      const io = pid === undefined ? undefined : readProc(`/proc/${pid}/io`);
      const wchar = io ? /^wchar:\s*(\d+)$/m.exec(io) : null;
      if (wchar) moved = Math.max(moved, Number(wchar[1]));
      return before + moved;
    },
    close() {
      if (final !== undefined || child.exitCode !== null || child.signalCode !== null) return;
      const pid = liveSocat();
      try {
        // socat alone, so that the shell still reports what it moved; before it exists, the group.
        if (pid !== undefined) process.kill(pid, 'SIGTERM');
        else if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    },
    done,
  };
}

function readProc(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
