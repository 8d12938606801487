// Parses the environment of the browser launcher and of the standalone node agent (the only place in agent/ that reads env).
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { Viewport } from '../schema/agent.ts';
import { defaultChromePath } from './launcher/chromePath.ts';

type Env = Record<string, string | undefined>;

const bool = (fallback: boolean) =>
  z.string().trim().toLowerCase().optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return fallback;
      if (v === 'true' || v === '1') return true;
      if (v === 'false' || v === '0') return false;
      ctx.addIssue({ code: 'custom', message: `expected true or false, got "${v}"` });
      return z.NEVER;
    });

const port = (fallback: number) =>
  z.string().trim().optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return fallback;
      const n = Number(v);
      if (!/^\d+$/.test(v) || n > 65535) {
        ctx.addIssue({ code: 'custom', message: `expected a port number 0-65535, got "${v}"` });
        return z.NEVER;
      }
      return n;
    });

const positiveInt = (fallback: number) =>
  z.string().trim().optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return fallback;
      if (!/^\d+$/.test(v)) {
        ctx.addIssue({ code: 'custom', message: `expected a non-negative integer, got "${v}"` });
        return z.NEVER;
      }
      return Number(v);
    });

const required = z.string({ error: 'is required' }).trim().min(1, 'is required');

const httpUrl = required
  .pipe(z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' }))
  .transform((u) => u.replace(/\/+$/, ''));
const optionalString = z.string().trim().optional().transform((v) => (v ? v : undefined));

const viewport = z.string().trim().optional().transform((v, ctx) => {
  if (!v) return undefined;
  const m = /^(\d+)x(\d+)$/i.exec(v);
  const parsed = m ? Viewport.safeParse({ width: Number(m[1]), height: Number(m[2]) }) : undefined;
  if (!parsed?.success) {
    ctx.addIssue({ code: 'custom', message: `expected WIDTHxHEIGHT (100x100 .. 7680x4320), got "${v}"` });
    return z.NEVER;
  }
  return parsed.data;
});

const logLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info');

/** Environment of one browser launcher (one process per session). */
export const LauncherEnv = z.object({
  /** A pooled launcher starts its browser first and learns its session later (over IPC). */
  CARAVAN_POOL: bool(false),
  /** A standby launcher waits for its session (over IPC) before it starts anything. */
  CARAVAN_STANDBY: bool(false),
  /** Local scheduler: READY goes to the scheduler over IPC (it registers the route and records it). */
  CARAVAN_IPC_READY: bool(false),
  CARAVAN_SESSION_ID: optionalString,
  CARAVAN_LAUNCHER_TOKEN: optionalString,
  CARAVAN_CONTROL_URL: httpUrl,
  CARAVAN_AGENT_URL: httpUrl,
  CARAVAN_NODE_ID: optionalString,
  CHROME_PATH: z.string().trim().min(1).default(defaultChromePath),
  CARAVAN_VIEWPORT: viewport,
  CARAVAN_KEEP_ALIVE: bool(false),
  CARAVAN_WATCH_STDIN: bool(false),
  CARAVAN_WORK_DIR: z.string().trim().min(1).optional(),
  /** Parent of the user-data dir when it is not CARAVAN_WORK_DIR (a tmpfs, see profileRoot.ts); the
   *  HTTP and code caches then stay in CARAVAN_WORK_DIR. */
  CARAVAN_PROFILE_DIR: z.string().trim().optional().refine((v) => !v || path.isAbsolute(v), 'must be an absolute path').transform((v) => (v ? v : undefined)),
  /** Short-lived URL of the context archive to restore before Chromium starts. */
  CARAVAN_CONTEXT_GET_URL: optionalString,
  /** Where to upload the profile after a clean close (persist: true). */
  CARAVAN_CONTEXT_PUT_URL: optionalString,
  CARAVAN_CONTEXT_MAX_BYTES: positiveInt(512 * 1024 * 1024),
  LOG_LEVEL: logLevel,
}).superRefine((e, ctx) => {
  if (e.CARAVAN_POOL && e.CARAVAN_STANDBY) ctx.addIssue({ code: 'custom', path: ['CARAVAN_STANDBY'], message: 'a launcher is pooled or standby, not both' });
  if (e.CARAVAN_POOL || e.CARAVAN_STANDBY) {
    if (e.CARAVAN_CONTEXT_GET_URL || e.CARAVAN_CONTEXT_PUT_URL) {
      ctx.addIssue(e.CARAVAN_POOL
        ? { code: 'custom', path: ['CARAVAN_POOL'], message: 'a pooled launcher cannot take a context' }
        : { code: 'custom', path: ['CARAVAN_STANDBY'], message: 'a standby launcher gets its context with its assignment, not from the environment' });
    }
    return;
  }
  for (const k of ['CARAVAN_SESSION_ID', 'CARAVAN_LAUNCHER_TOKEN'] as const) {
    if (!e[k]) ctx.addIssue({ code: 'custom', path: [k], message: 'is required' });
  }
}).transform((e) => ({
  pool: e.CARAVAN_POOL,
  standby: e.CARAVAN_STANDBY,
  ipcReady: e.CARAVAN_IPC_READY,
  sessionId: e.CARAVAN_SESSION_ID ?? '',
  launcherToken: e.CARAVAN_LAUNCHER_TOKEN ?? '',
  controlUrl: e.CARAVAN_CONTROL_URL,
  agentUrl: e.CARAVAN_AGENT_URL,
  nodeId: e.CARAVAN_NODE_ID,
  chromePath: e.CHROME_PATH,
  viewport: e.CARAVAN_VIEWPORT,
  keepAlive: e.CARAVAN_KEEP_ALIVE,
  watchStdin: e.CARAVAN_WATCH_STDIN,
  workDir: e.CARAVAN_WORK_DIR ?? os.tmpdir(),
  profileDir: e.CARAVAN_PROFILE_DIR,
  context: e.CARAVAN_CONTEXT_GET_URL || e.CARAVAN_CONTEXT_PUT_URL
    ? { getUrl: e.CARAVAN_CONTEXT_GET_URL, putUrl: e.CARAVAN_CONTEXT_PUT_URL, maxBytes: e.CARAVAN_CONTEXT_MAX_BYTES }
    : undefined,
  logLevel: e.LOG_LEVEL,
}));
export type LauncherConfig = z.output<typeof LauncherEnv>;

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|::1|\[::1\])$/i;

/** Environment of the standalone node agent (`caravan agent`). */
export const AgentEnv = z.object({
  AGENT_CDP_PORT: port(9223),
  AGENT_PUBLIC_HOST: z.string().trim().min(1).default('127.0.0.1'),
  AGENT_BIND_HOST: optionalString,
  AGENT_CONTROL_PORT: port(9224),
  AGENT_WEBDRIVER_PORT: port(4444),
  CHROMEDRIVER_PATH: z.string().trim().min(1).default('/usr/bin/chromedriver'),
  AGENT_TLS_CERT: optionalString,
  AGENT_TLS_KEY: optionalString,
  AGENT_IDLE_GRACE_MS: positiveInt(30_000),
  /** What moves CDP bytes after the handshake: socat when installed (auto), or Node (proxy/relay.ts). */
  AGENT_RELAY: z.enum(['auto', 'socat', 'node'], { error: 'expected auto, socat or node' }).default('auto'),
  /** Where socat is looked up. */
  PATH: z.string().default('/usr/local/bin:/usr/bin:/bin'),
  CARAVAN_NODE_ID: required,
  CARAVAN_CONTROL_URL: httpUrl,
  /** Optional: without it the agent signs its own node credential with SERVICE_JWT_SIGNING_KEY. */
  CARAVAN_NODE_TOKEN: optionalString,
  /** The Nomad client node this agent runs on (`${node.unique.id}` in caravan-agent.nomad.hcl). */
  CARAVAN_NOMAD_NODE_ID: optionalString,
  AGENT_HEARTBEAT_MS: positiveInt(5_000),
  NODE_CAPACITY: positiveInt(16),
  // HS256 wants at least 256 bits of key material.
  SERVICE_JWT_SIGNING_KEY: z.string({ error: 'is required' }).min(32, 'must be at least 32 characters'),
  LOG_LEVEL: logLevel,
}).superRefine((e, ctx) => {
  for (const k of ['AGENT_HEARTBEAT_MS', 'NODE_CAPACITY'] as const) {
    if (e[k] === 0) ctx.addIssue({ code: 'custom', path: [k], message: 'must be at least 1' });
  }
  if (Boolean(e.AGENT_TLS_CERT) !== Boolean(e.AGENT_TLS_KEY)) {
    const missing = e.AGENT_TLS_CERT ? 'AGENT_TLS_KEY' : 'AGENT_TLS_CERT';
    ctx.addIssue({ code: 'custom', path: [missing], message: 'AGENT_TLS_CERT and AGENT_TLS_KEY must be set together' });
  }
}).transform((e) => ({
  cdpPort: e.AGENT_CDP_PORT,
  publicHost: e.AGENT_PUBLIC_HOST,
  bindHost: e.AGENT_BIND_HOST ?? (LOOPBACK.test(e.AGENT_PUBLIC_HOST) ? '127.0.0.1' : '0.0.0.0'),
  controlPort: e.AGENT_CONTROL_PORT,
  webdriverPort: e.AGENT_WEBDRIVER_PORT,
  chromedriverPath: e.CHROMEDRIVER_PATH,
  tls: e.AGENT_TLS_CERT && e.AGENT_TLS_KEY ? { certFile: e.AGENT_TLS_CERT, keyFile: e.AGENT_TLS_KEY } : undefined,
  idleGraceMs: e.AGENT_IDLE_GRACE_MS,
  relay: e.AGENT_RELAY,
  path: e.PATH,
  nodeId: e.CARAVAN_NODE_ID,
  controlUrl: e.CARAVAN_CONTROL_URL,
  nodeToken: e.CARAVAN_NODE_TOKEN,
  nomadNodeId: e.CARAVAN_NOMAD_NODE_ID,
  heartbeatMs: e.AGENT_HEARTBEAT_MS,
  capacity: e.NODE_CAPACITY,
  signingKey: e.SERVICE_JWT_SIGNING_KEY,
  logLevel: e.LOG_LEVEL,
}));
export type AgentConfig = z.output<typeof AgentEnv>;

function parseWith<T extends z.ZodType>(schema: T, env: Env, what: string): z.output<T> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const detail = result.error.issues
    .map((i) => `${i.path.map(String).join('.') || '(env)'}: ${i.message}`)
    .join('; ');
  throw new Error(`invalid ${what} environment: ${detail}`);
}

/** Parses the launcher's env; throws an Error naming every bad variable. */
export function parseLauncherEnv(env: Env): LauncherConfig {
  return parseWith(LauncherEnv, env, 'launcher');
}

/** Parses the standalone agent's env; throws an Error naming every bad variable. */
export function parseAgentEnv(env: Env): AgentConfig {
  return parseWith(AgentEnv, env, 'agent');
}

/** The launcher's config from this process's environment. */
export function loadLauncherConfig(): LauncherConfig {
  return parseLauncherEnv(process.env);
}

/** The standalone agent's config from this process's environment. */
export function loadAgentConfig(): AgentConfig {
  return parseAgentEnv(process.env);
}
