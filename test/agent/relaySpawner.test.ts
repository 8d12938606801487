// The relay spawner on its own: a connection half whose other half never arrives (a failed IPC
// send in the proxy) is closed, not kept open, and reported as failed.
import { fork, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { findSocat } from '../../agent/proxy/relay.ts';
import { SpawnerReport, type SpawnerRequest } from '../../schema/agent.ts';

const socat = findSocat('auto', process.env.PATH ?? '');
let spawner: ChildProcess;

beforeAll(async () => {
  spawner = fork(path.resolve('agent/proxy/relaySpawner.ts'), [socat ?? '/usr/bin/socat', '200'], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'json',
  });
  await new Promise<void>((resolve) => spawner.on('message', (m) => (m as { type: string }).type === 'ready' && resolve()));
});
afterAll(() => {
  spawner?.kill();
});

it.skipIf(!socat)('closes a half whose other half never arrives, and reports it', async () => {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const accepted = new Promise<net.Socket>((r) => server.once('connection', r));
    const peer = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
    const half = await accepted;
    const peerClosed = new Promise<void>((r) => peer.once('close', () => r()));
    peer.on('error', () => undefined);
    const ended = new Promise<SpawnerReport>((r) => spawner.on('message', (m) => (m as { id?: number }).id === 7 && r(SpawnerReport.parse(m))));
    const request: SpawnerRequest = { type: 'client', id: 7 };
    await new Promise<void>((resolve, reject) => spawner.send(request, half, (err) => (err ? reject(err) : resolve())));
    await peerClosed;
    expect(await ended).toEqual({ type: 'ended', id: 7, failed: 'only one half of the connection arrived' });
  } finally {
    server.close();
  }
});
