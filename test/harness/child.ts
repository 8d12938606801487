// Runs `caravan serve` as a real child process on free ports against the test database.
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { testDatabaseUrl } from './db.ts';
import { TEST_SECRET } from './server.ts';
import { waitFor } from './waitFor.ts';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export interface ChildServer {
  url: string;
  child: ChildProcess;
  apiKey: string;
  projectId: string;
  dataDir: string;
  stop(): Promise<void>;
}

export async function startChildServer(env: Record<string, string> = {}): Promise<ChildServer> {
  const port = await freePort();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'caravan-child-'));
  const apiKey = `cvn_test_${crypto.randomBytes(16).toString('hex')}`;
  const projectId = `proj_child_${crypto.randomBytes(4).toString('hex')}`;
  const child = spawn(process.execPath, ['bin/caravan.js', 'serve'], {
    cwd: path.resolve(import.meta.dirname, '../..'),
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: testDatabaseUrl(),
      EVENT_BUS: 'postgres',
      SERVICE_JWT_SIGNING_KEY: TEST_SECRET,
      DASHBOARD_PORT: String(port),
      AGENT_CDP_PORT: '0',
      AGENT_WEBDRIVER_PORT: '0',
      CARAVAN_NODE_ID: `child-${crypto.randomBytes(4).toString('hex')}`,
      CARAVAN_DATA_DIR: dataDir,
      SERVICE_BOOTSTRAP_API_KEY: apiKey,
      SERVICE_BOOTSTRAP_PROJECT_ID: projectId,
      LOG_LEVEL: 'warn',
      ...env,
    },
  });
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitFor(async () => (await fetch(`${url}/v1/projects`, { headers: { 'x-svc-api-key': apiKey } })).ok, { timeoutMs: 30_000, what: 'child server' });
  return {
    url, child, apiKey, projectId, dataDir,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}
