// Entry of the standalone node agent process (`node --import tsx agent/main.ts`, later `caravan agent`).
import fs from 'node:fs/promises';
import { pino } from 'pino';
import { cachedSecret } from '../schema/token.ts';
import { createAgent } from './agent.ts';
import { loadAgentConfig, type AgentConfig } from './config.ts';
import { controlPlaneClient } from './report.ts';

let config: AgentConfig;
try {
  config = loadAgentConfig();
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
}

const log = pino({ level: config.logLevel, base: { pid: process.pid, role: 'agent' } });
const signingKey = new TextEncoder().encode(config.signingKey);
const controlPlane = controlPlaneClient(config.controlUrl, config.nodeToken);
const tls = config.tls
  ? { cert: await fs.readFile(config.tls.certFile), key: await fs.readFile(config.tls.keyFile) }
  : undefined;

const agent = createAgent({
  nodeId: config.nodeId,
  publicHost: config.publicHost,
  bindHost: config.bindHost,
  cdpPort: config.cdpPort,
  controlPort: config.controlPort,
  webdriverPort: config.webdriverPort,
  chromedriverPath: config.chromedriverPath,
  tls,
  idleGraceMs: config.idleGraceMs,
  secrets: cachedSecret({ get: async () => signingKey }),
  signals: (list) => controlPlane.reportNodeSignals(list),
  log,
});

await agent.start();
log.info({ nodeId: config.nodeId, ...agent.address() }, 'node agent started');

let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'node agent stopping');
  void agent.stop().then(() => process.exit(0), (err: unknown) => {
    log.error({ err }, 'stop failed');
    process.exit(1);
  });
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
