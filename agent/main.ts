// Entry of the standalone node agent process (`caravan agent`): one per browser VM (a Nomad
// system job). Serves the CDP proxy, the WebDriver relay and the launchers' loopback control
// port; registers the node with the control plane, heartbeats, sends its signals as envelopes
// and carries out the commands it receives (release, drain).
import fs from 'node:fs/promises';
import { pino } from 'pino';
import { cachedSecret } from '../schema/token.ts';
import { createAgent } from './agent.ts';
import { createCommandHandler } from './commands.ts';
import { loadAgentConfig, type AgentConfig } from './config.ts';
import { createNodeLink } from './nodeLink.ts';
import { findSocat } from './proxy/relay.ts';
import { nodeTokenSigner } from './nodeToken.ts';

let config: AgentConfig;
try {
  config = loadAgentConfig();
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
}

const log = pino({ level: config.logLevel, base: { pid: process.pid, role: 'agent', nodeId: config.nodeId } });
const signingKey = new TextEncoder().encode(config.signingKey);
const secrets = cachedSecret({ get: async () => signingKey });
const fixedToken = config.nodeToken;
const token = fixedToken ? async () => fixedToken : nodeTokenSigner(secrets, config.nodeId);
const tls = config.tls
  ? { cert: await fs.readFile(config.tls.certFile), key: await fs.readFile(config.tls.keyFile) }
  : undefined;

// The agent and its link refer to each other (signals go out through the link, the link reports
// the agent's ports and routes), so the link is bound once both exist.
let link: ReturnType<typeof createNodeLink> | undefined;
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
  socat: findSocat(config.relay, config.path),
  secrets,
  signals: async (list) => {
    if (!link) throw new Error('not linked to the control plane yet');
    await link.signal(list);
  },
  log,
});
const commands = createCommandHandler({ routes: agent.routes, log });

await agent.start();
const addr = agent.address();
link = createNodeLink({
  controlUrl: config.controlUrl,
  nodeId: config.nodeId,
  token,
  heartbeatMs: config.heartbeatMs,
  routes: () => agent.routes.list().length,
  registration: () => ({
    nodeId: config.nodeId,
    publicHost: config.publicHost,
    cdpPort: addr.cdpPort,
    ...(addr.webdriverPort ? { webdriverPort: addr.webdriverPort } : {}),
    tls: Boolean(tls),
    capacity: config.capacity,
    controlPort: Number(new URL(addr.controlUrl).port),
    ...(config.nomadNodeId ? { nomadNodeId: config.nomadNodeId } : {}),
  }),
  onCommand: (command) => commands.apply(command),
  log,
});
await link.start();
log.info({ ...addr, controlPlane: config.controlUrl, capacity: config.capacity }, 'node agent started');

let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'node agent stopping');
  commands.stop();
  // The agent first: its last signals (bytes) still go out through the link.
  void agent.stop().then(() => link?.stop()).then(() => process.exit(0), (err: unknown) => {
    log.error({ err }, 'stop failed');
    process.exit(1);
  });
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
