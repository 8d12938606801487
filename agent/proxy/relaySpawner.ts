// Child process of the CDP proxy that starts the socat relays. Forking the control plane
// (hundreds of MB mapped) to start a relay blocked its event loop for 15-60 ms per connection
// here; forking this small process takes about 1 ms. The proxy sends both sockets of an
// upgraded connection (two IPC messages with handles) once it holds no byte of it; this process
// stops reading them as they arrive, starts `sh -c 'socat ...; cat /proc/$$/io'` with the
// sockets as fds 3 and 4, lets go of them, and reports `started` (the shell's pid) and `ended`
// (socat's byte count). What the peers send meanwhile waits in the kernel for socat.
import { spawn } from 'node:child_process';
import type net from 'node:net';
import { SpawnerRequest, type SpawnerReport } from '../../schema/agent.ts';
import { holdReads, socatScript, wcharOf } from './relay.ts';

const socat = process.argv[2];
if (!socat || !process.send) {
  process.stderr.write('usage: relaySpawner.ts <socat path> (started by the CDP proxy with an IPC channel)\n');
  process.exit(2);
}

/** How long a half waits for its other half (optional argv[3], ms): both are sent in the same
 *  tick, so only a failed send leaves one alone, which is then closed instead of kept open. */
const PARTNER_WAIT_MS = Number(process.argv[3] ?? 5_000);

const halves = new Map<number, { client?: net.Socket; upstream?: net.Socket; timer: NodeJS.Timeout }>();

function report(r: SpawnerReport): void {
  if (process.connected) process.send?.(r);
}

function start(id: number, client: net.Socket, upstream: net.Socket): void {
  const fail = (message: string) => {
    client.destroy();
    upstream.destroy();
    report({ type: 'ended', id, failed: message });
  };
  if (client.readableLength > 0 || upstream.readableLength > 0) return fail('bytes were read before socat could take them');
  // Its own process group: the proxy can take the shell down with socat before socat exists.
  const child = spawn('/bin/sh', ['-c', socatScript, socat!], { stdio: ['ignore', 'pipe', 'pipe', client, upstream], detached: true });
  let out = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    stderr = (stderr + d).slice(-1_000);
  });
  child.once('spawn', () => {
    client.destroy();
    upstream.destroy();
    report({ type: 'started', id, pid: child.pid ?? 0 });
  });
  child.once('error', (e) => fail(`socat could not be started: ${e.message}`));
  child.once('close', () => {
    const wchar = wcharOf(out);
    report({ type: 'ended', id, ...(wchar !== undefined ? { wchar } : {}), ...(stderr.trim() ? { stderr: stderr.trim() } : {}) });
  });
}

process.on('message', (raw: unknown, handle: unknown) => {
  const msg = SpawnerRequest.safeParse(raw);
  if (!msg.success || !handle) return;
  const socket = handle as net.Socket;
  // The socket arrives reading: stop that in this same tick, before any read can happen.
  holdReads(socket);
  const { id } = msg.data;
  const half = halves.get(id) ?? { timer: setTimeout(() => alone(id), PARTNER_WAIT_MS) };
  if (msg.data.type === 'client') {
    half.client = socket;
  } else {
    half.upstream = socket;
  }
  halves.set(id, half);
  if (half.client && half.upstream) {
    clearTimeout(half.timer);
    halves.delete(id);
    start(id, half.client, half.upstream);
  }
});

/** The other half never came: close this one, so that its peer sees the connection end. */
function alone(id: number): void {
  const half = halves.get(id);
  if (!half) return;
  halves.delete(id);
  half.client?.destroy();
  half.upstream?.destroy();
  report({ type: 'ended', id, failed: 'only one half of the connection arrived' });
}
process.on('disconnect', () => process.exit(0));
report({ type: 'ready' });
