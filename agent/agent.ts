// The node agent: route registry, CDP proxy, WebDriver relay and launcher control listener, composed.
import type { Logger } from 'pino';
import type { NodeSignal } from '../schema/agent.ts';
import type { SecretSource } from '../schema/token.ts';
import { createControlListener } from './control.ts';
import { createCdpProxy, type TlsFiles } from './proxy/cdp.ts';
import type { HandOverTiming } from './proxy/relay.ts';
import { createWebDriverRelay } from './proxy/webdriver.ts';
import { createRouteRegistry, type RouteRegistry, type Timers } from './routes.ts';
import { httpFrameSink, startScreencast, type Screencast, type ScreencastSpec } from './screencast.ts';

export interface AgentOptions {
  nodeId: string;
  /** Host clients use in connect URLs. */
  publicHost: string;
  /** Address the CDP proxy and WebDriver relay bind to. */
  bindHost: string;
  /** 0 picks a free port (tests). */
  cdpPort: number;
  controlPort: number;
  webdriverPort: number;
  chromedriverPath: string;
  /** PEM contents (not paths). */
  tls?: TlsFiles;
  idleGraceMs: number;
  /** socat's path: the CDP proxy hands upgraded connections to it (proxy/relay.ts); unset: Node relays them. */
  socat?: string;
  /** When socat takes a connection over from Node (default: 50 ms quiet, or 2 s in). */
  handOver?: HandOverTiming;
  /** Already wrapped in cachedSecret. */
  secrets: SecretSource;
  signals: (list: NodeSignal[]) => Promise<void>;
  log: Logger;
  timers?: Timers;
  now?: () => Date;
}

export interface AgentAddress {
  cdpPort: number;
  /** Loopback URL launchers register routes with (CARAVAN_AGENT_URL). */
  controlUrl: string;
  webdriverPort: number | undefined;
}

export interface Agent {
  start(): Promise<void>;
  stop(): Promise<void>;
  address(): AgentAddress;
  routes: RouteRegistry;
  /** Streams a session's screencast to `spec.frameUrl` until stopped, the receiver answers 404
   *  or the session's route goes away; undefined when the session is not on this node. */
  startScreencast(sessionId: string, spec: ScreencastSpec): Promise<Screencast | undefined>;
}

export function createAgent(opts: AgentOptions): Agent {
  const log = opts.log.child({ nodeId: opts.nodeId });
  const routes = createRouteRegistry({ idleGraceMs: opts.idleGraceMs, signals: opts.signals, log, timers: opts.timers });
  const common = { routes, secrets: opts.secrets, log, tls: opts.tls, now: opts.now };
  const cdp = createCdpProxy({ ...common, host: opts.bindHost, port: opts.cdpPort, publicHost: opts.publicHost, ...(opts.socat ? { socat: opts.socat } : {}), ...(opts.handOver ? { handOver: opts.handOver } : {}) });
  const webdriver = createWebDriverRelay({ ...common, host: opts.bindHost, port: opts.webdriverPort, chromedriverPath: opts.chromedriverPath });
  const control = createControlListener({ routes, secrets: opts.secrets, log, port: opts.controlPort, now: opts.now });
  let started = false;
  const casts = new Map<Screencast, string>();
  routes.onRemove((sessionId) => {
    for (const [cast, id] of casts) if (id === sessionId) void cast.stop();
  });

  return {
    routes,
    async startScreencast(sessionId, spec) {
      const route = routes.get(sessionId);
      if (!route || !started) return undefined;
      let self: Screencast | undefined;
      let ended = false;
      self = await startScreencast({
        ...spec,
        browserPort: route.browserPort,
        browserWsPath: route.browserWsPath,
        sink: httpFrameSink(spec.frameUrl),
        log: log.child({ sessionId }),
        onEnd: () => {
          ended = true;
          if (self) casts.delete(self);
        },
      });
      if (!ended) casts.set(self, sessionId);
      return self;
    },
    async start() {
      await cdp.start();
      log.info({ relay: opts.socat ? `socat (${opts.socat})` : 'node' }, 'CDP relay after the handshake');
      try {
        await webdriver.start();
        await control.start();
      } catch (err) {
        await Promise.allSettled([cdp.stop(), webdriver.stop()]);
        throw err;
      }
      started = true;
    },
    async stop() {
      if (!started) return;
      started = false;
      await Promise.allSettled([...casts.keys()].map((c) => c.stop()));
      await Promise.allSettled([control.stop(), cdp.stop(), webdriver.stop()]);
      await routes.stop();
      log.info('agent stopped');
    },
    address() {
      return { cdpPort: cdp.address().port, controlUrl: control.url(), webdriverPort: webdriver.address()?.port };
    },
  };
}
