// The operator runtime, composed: live settings, activity feed, public HTTPS entrypoint, live-view
// shares and the ingress limits, with their start and stop in the order shutdown needs.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { normalizeSettings } from '../../schema/settings/settings.ts';
import type { Config } from '../config.ts';
import type { Deps } from '../deps.ts';
import { LIVE_STATUSES } from '../../schema/states.ts';
import { accessHook, clientKey } from './access.ts';
import { activityFeed, type ActivityFeed } from './activity/feed.ts';
import { fixedWindow, type FixedWindow } from './ingress.ts';
import { mdnsAdvertiser, type Advertiser } from './publicHttps/advertise.ts';
import { createPublicHttps, type PublicHttps } from './publicHttps/tunnel.ts';
import { registerRuntimeRoutes } from './routes/index.ts';
import type { SettingsDeps } from './settings/envelope.ts';
import { liveSettings } from './settings/live.ts';
import { readSettingsRow } from './settings/store.ts';
import { createShares, type LiveViewPort, type Shares } from './share/shares.ts';
import { sseRegistry, type SseRegistry } from './sse.ts';

/** What tests (and embedders) may replace. */
export interface RuntimeOptions {
  /** The mDNS advertiser (default: bonjour-service multicast). */
  advertiser?: Advertiser;
  /** Delay before restarting a tunnel that exited (default 5 s). */
  tunnelRetryMs?: number;
  /** SIGTERM-to-SIGKILL grace of the tunnel (default 3 s). */
  tunnelKillAfterMs?: number;
  /** Heartbeat of SSE streams (default 15 s). */
  heartbeatMs?: number;
  /** Rate limit of the public frame routes (default 1,200 per 60 s). */
  ingressMax?: number;
}

export interface Runtime {
  config: Pick<Config, 'DASHBOARD_TOKEN' | 'PUBLIC_API_TOKEN' | 'PUBLIC_HTTPS_ENABLED'>;
  deps: Deps;
  log: Logger;
  settings: SettingsDeps;
  activity: ActivityFeed;
  publicHttps: PublicHttps;
  shares: Shares;
  sse: SseRegistry;
  limiter: FixedWindow;
  heartbeatMs: number;
  stats(): Promise<unknown>;
}

export interface RuntimeHandle extends Runtime {
  /** Loads the saved settings and applies them; starts the activity feed. */
  start(): Promise<void>;
  /** Starts the public entrypoint (once the listener is up). */
  startEntrypoint(): void;
  /** Ends shares and streams, then stops the tunnel child (SIGTERM, SIGKILL after the grace). */
  stop(): Promise<void>;
}

export function createRuntime(args: {
  deps: Deps;
  config: Config;
  log: Logger;
  options?: RuntimeOptions;
  /** The server's own base URL once listening (the tunnel's default target). */
  serverUrl: () => string;
  serverPort: () => number;
  /** The local node's warm pool (started browsers, warm or starting) and spare launchers, when the embedded scheduler runs. */
  pool?: () => { warm: number; starting: number; spare: number } | null;
  liveView?: () => LiveViewPort | undefined;
  /** Environment of the tunnel child (server/config.ts inheritedEnv: no secrets). */
  tunnelEnv: Record<string, string>;
}): RuntimeHandle {
  const { deps, config, log } = args;
  const options = args.options ?? {};
  const live = liveSettings();
  const settings: SettingsDeps = { db: deps.db, clock: deps.clock, live };
  const activity = activityFeed({ db: deps.db, bus: deps.bus, clock: deps.clock, log: log.child({ component: 'activity' }) });
  const publicHttps = createPublicHttps({
    enabled: config.PUBLIC_HTTPS_ENABLED,
    targetUrl: () => config.PUBLIC_HTTPS_TARGET_URL ?? args.serverUrl(),
    bin: config.PUBLIC_HTTPS_TUNNEL_BIN,
    env: args.tunnelEnv,
    ...(options.tunnelRetryMs !== undefined ? { retryDelayMs: options.tunnelRetryMs } : {}),
    ...(options.tunnelKillAfterMs !== undefined ? { killAfterMs: options.tunnelKillAfterMs } : {}),
    log,
    clock: deps.clock,
    action: (a) => activity.action(a),
    advertiser: options.advertiser ?? mdnsAdvertiser(log.child({ component: 'mdns' })),
    advertisement: () => ({ name: live.current().identity.displayName || 'Caravan', port: args.serverPort() }),
  });
  const shares = createShares({
    db: deps.db, bus: deps.bus, clock: deps.clock, log,
    settings: () => live.current(),
    controlUrl: deps.controlUrl,
    publicUrl: () => publicHttps.state().publicUrl || undefined,
    liveView: (sessionId, spec) => args.liveView?.()?.(sessionId, spec) ?? Promise.resolve(undefined),
  });
  live.onApply((effective) => shares.reconcile(effective), 'live view');
  const sse = sseRegistry(options.heartbeatMs);
  const limiter = fixedWindow({ clock: deps.clock, ...(options.ingressMax ? { max: options.ingressMax } : {}) });

  const runtime: RuntimeHandle = {
    config, deps, log, settings, activity, publicHttps, shares, sse, limiter,
    heartbeatMs: options.heartbeatMs ?? 15_000,
    async stats() {
      const [byStatus, nodes] = await Promise.all([
        deps.db.session.groupBy({ by: ['status'], where: { status: { in: LIVE_STATUSES } }, _count: { _all: true } }),
        deps.db.node.findMany({ orderBy: { id: 'asc' }, select: { id: true, status: true, capacity: true, lastSeenAt: true } }),
      ]);
      const counts = Object.fromEntries(byStatus.map((r) => [r.status, r._count._all]));
      const { version, error } = live.status();
      return {
        sessions: { running: Object.values(counts).reduce((a, b) => a + b, 0), byStatus: counts },
        nodes: { total: nodes.length, up: nodes.filter((n) => n.status === 'UP').length, list: nodes.map((n) => ({ ...n, lastSeenAt: n.lastSeenAt.toISOString() })) },
        pool: args.pool?.() ?? null,
        runtime: {
          publicHttps: publicHttps.state(),
          shares: { active: shares.active() },
          activity: { streams: sse.count() },
          settings: { appliedUpdatedAt: version ?? null, applyError: error },
        },
      };
    },
    async start() {
      const row = await readSettingsRow(deps.db);
      const applied = await live.apply(normalizeSettings(row.intent), row.updatedAt);
      if (!applied.applied) log.warn({ error: applied.error }, 'saved settings not fully applied at start');
      await activity.start();
    },
    startEntrypoint() {
      publicHttps.start();
    },
    async stop() {
      await shares.close();
      sse.closeAll();
      activity.close();
      await publicHttps.stop();
    },
  };
  return runtime;
}

/** Adds the access hook (before any route, so that it covers every one) and the /api routes. */
export function registerRuntime(app: FastifyInstance, rt: Runtime): void {
  app.addHook('onRequest', accessHook({
    dashboardToken: rt.config.DASHBOARD_TOKEN,
    tunnelEnabled: rt.config.PUBLIC_HTTPS_ENABLED,
    publicHost: () => rt.publicHttps.publicHost(),
    secrets: rt.deps.secrets,
    clock: rt.deps.clock,
  }));
  registerRuntimeRoutes(app, rt, (req) => clientKey(req, { publicHost: () => rt.publicHttps.publicHost(), tunnelEnabled: rt.config.PUBLIC_HTTPS_ENABLED }));
}
