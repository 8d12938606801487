// The control plane's configuration: every environment variable it reads, parsed once with
// zod. Nothing else in server/ reads process.env.
import path from 'node:path';
import { z } from 'zod';
import { defaultChromePath } from '../agent/launcher/chromePath.ts';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off', ''])
  .transform((v) => ['true', '1', 'yes', 'on'].includes(v));
const port = z.coerce.number().int().min(0).max(65535);
const seconds = z.coerce.number().int().positive();

export const ConfigSchema = z
  .object({
    DASHBOARD_HOST: z.string().min(1).default('127.0.0.1'),
    DASHBOARD_PORT: port.default(8420),
    DASHBOARD_TOKEN: z.string().min(16, 'DASHBOARD_TOKEN must be at least 16 characters').optional(),
    CARAVAN_DATA_DIR: z.string().min(1).default('./.caravan'),
    DATABASE_URL: z.string().url('DATABASE_URL must be a postgresql:// URL').regex(/^postgres(ql)?:\/\//, 'DATABASE_URL must be a postgresql:// URL').optional(),
    SERVICE_JWT_SIGNING_KEY: z.string().min(32, 'SERVICE_JWT_SIGNING_KEY must be at least 32 characters').optional(),
    SERVICE_MAX_SESSION_TIMEOUT: seconds.default(21600),
    SERVICE_BOOTSTRAP_API_KEY: z.string().min(20, 'SERVICE_BOOTSTRAP_API_KEY must be at least 20 characters').optional(),
    SERVICE_BOOTSTRAP_PROJECT_ID: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/).optional(),
    SERVICE_READY_WAIT_MS: z.coerce.number().int().positive().default(45_000),
    SESSION_RECORD_RETENTION: z.coerce.number().int().nonnegative().default(300),
    REAPER_INTERVAL_MS: z.coerce.number().int().positive().default(1000),
    EVENT_BUS: z.enum(['memory', 'postgres']).optional(),
    SCHEDULER: z.enum(['local', 'nomad']).default('local'),
    // SCHEDULER=nomad: each session is a dispatch of a parameterized Nomad job (infra/nomad/).
    NOMAD_ADDR: z.string().regex(/^https?:\/\/[^/\s]+/, 'NOMAD_ADDR must be a URL such as http://127.0.0.1:4646').default('http://127.0.0.1:4646'),
    NOMAD_TOKEN: z.string().min(1).optional(),
    NOMAD_NAMESPACE: z.string().min(1).default('default'),
    NOMAD_REGION: z.string().min(1).optional(),
    NOMAD_JOB_ID: z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/, 'NOMAD_JOB_ID: letters, digits, _ . - (at most 100)').default('caravan-browser-session'),
    /** The job registered when Nomad does not have NOMAD_JOB_ID (default infra/nomad/browser-session.json). */
    NOMAD_JOB_FILE: z.string().min(1).optional(),
    /** Replaces the launcher task's command and args: whitespace-separated, e.g. "/usr/bin/node /opt/caravan/bin/caravan.js launcher". */
    NOMAD_LAUNCHER_COMMAND: z.string().min(1).optional(),
    /** Comma-separated datacenters of the browser job (default: the job file's, "*"). */
    NOMAD_DATACENTERS: z.string().min(1).optional(),
    /** URL launchers and agents on other VMs reach this control plane at (default: its own listener). */
    CARAVAN_CONTROL_URL: z.string().regex(/^https?:\/\/[^/\s]+/, 'CARAVAN_CONTROL_URL must be a URL such as https://caravan.internal:8420').optional(),
    /** A standalone agent that has not heartbeated for this long is marked DOWN; its sessions end in ERROR. */
    NODE_HEARTBEAT_TIMEOUT_MS: z.coerce.number().int().positive().default(15_000),
    CARAVAN_NODE_ID: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/).default('local'),
    CHROME_PATH: z.string().min(1).default(defaultChromePath),
    CHROMEDRIVER_PATH: z.string().min(1).default('/usr/bin/chromedriver'),
    AGENT_CDP_PORT: port.default(9223),
    AGENT_CONTROL_PORT: port.default(0),
    AGENT_WEBDRIVER_PORT: port.default(4444),
    AGENT_PUBLIC_HOST: z.string().min(1).default('127.0.0.1'),
    AGENT_BIND_HOST: z.string().min(1).optional(),
    AGENT_TLS_CERT: z.string().min(1).optional(),
    AGENT_TLS_KEY: z.string().min(1).optional(),
    AGENT_IDLE_GRACE_MS: z.coerce.number().int().nonnegative().default(30_000),
    /** What moves CDP bytes after the handshake: socat when installed (auto), or Node (agent/proxy/relay.ts). */
    AGENT_RELAY: z.enum(['auto', 'socat', 'node'], { error: 'AGENT_RELAY must be auto, socat or node' }).default('auto'),
    /** Where socat is looked up. */
    PATH: z.string().default('/usr/local/bin:/usr/bin:/bin'),
    /** Where browsers' user-data dirs live: auto (memory, /dev/shm, when it is a tmpfs with 1 GiB free;
     *  else disk), disk, or an absolute path. Nomad jobs keep them in the task dir unless a path is given. */
    BROWSER_PROFILE_DIR: z.string().trim().refine((v) => v === 'auto' || v === 'disk' || path.isAbsolute(v), 'BROWSER_PROFILE_DIR must be auto, disk or an absolute path').default('auto'),
    POOL_SIZE: z.coerce.number().int().min(0).max(64).default(2),
    POOL_SPARE_LAUNCHERS: z.coerce.number().int().min(0).max(8).default(1),
    NODE_CAPACITY: z.coerce.number().int().positive().default(16),
    S3_ENDPOINT: z.string().url('S3_ENDPOINT must be a URL').optional(),
    S3_REGION: z.string().min(1).default('us-east-1'),
    S3_BUCKET: z.string().min(3).optional(),
    S3_FORCE_PATH_STYLE: bool.optional(),
    CONTEXT_UPLOAD_WINDOW: z.coerce.number().int().min(1).max(7 * 24 * 3600).default(900),
    CONTEXT_MAX_BYTES: z.coerce.number().int().positive().default(512 * 1024 * 1024),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    LOG_PRETTY: bool.default(false),
    PUBLIC_HTTPS_ENABLED: bool.default(false),
    PUBLIC_HTTPS_TARGET_URL: z.string().url('PUBLIC_HTTPS_TARGET_URL must be a URL such as http://127.0.0.1:8420').optional(),
    PUBLIC_HTTPS_TUNNEL_BIN: z.string().min(1).default('cloudflared'),
    PUBLIC_API_TOKEN: z.string().min(16, 'PUBLIC_API_TOKEN must be at least 16 characters').optional(),
  })
  .refine((c) => !c.SERVICE_BOOTSTRAP_API_KEY === !c.SERVICE_BOOTSTRAP_PROJECT_ID, {
    message: 'SERVICE_BOOTSTRAP_API_KEY and SERVICE_BOOTSTRAP_PROJECT_ID go together: set both or neither',
  })
  .refine((c) => !c.AGENT_TLS_CERT === !c.AGENT_TLS_KEY, {
    message: 'AGENT_TLS_CERT and AGENT_TLS_KEY go together: set both or neither',
  })
  .refine((c) => !c.PUBLIC_HTTPS_ENABLED || c.DASHBOARD_TOKEN, {
    path: ['DASHBOARD_TOKEN'],
    message: 'DASHBOARD_TOKEN is required when PUBLIC_HTTPS_ENABLED=true: admin routes need it once the API is reachable from the internet',
  })
  .refine((c) => isLoopbackHost(c.DASHBOARD_HOST) || c.DASHBOARD_TOKEN, {
    path: ['DASHBOARD_TOKEN'],
    message: 'DASHBOARD_TOKEN is required when DASHBOARD_HOST is not a loopback address: set it, or bind DASHBOARD_HOST=127.0.0.1',
  });

/** 127.0.0.0/8, ::1 and localhost: only this machine can connect. */
export function isLoopbackHost(host: string): boolean {
  return /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|\[::1\]|localhost)$/i.test(host.trim());
}

export type Config = z.infer<typeof ConfigSchema> & { dataDir: string };

/** Parses the environment; throws one readable error naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = ConfigSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.') || 'config'}: ${i.message}`);
    throw new Error(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  return { ...parsed.data, dataDir: path.resolve(parsed.data.CARAVAN_DATA_DIR) };
}

/** The few variables a launcher child inherits (PATH, HOME, locale, temp dir). */
export function inheritedEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const keep = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'TZ'];
  return Object.fromEntries(keep.flatMap((k) => (env[k] ? [[k, env[k]]] : [])));
}

/** What the CLI's operator commands need: where the server is and the dashboard token. */
export function cliDefaults(env: NodeJS.ProcessEnv = process.env): { url: string; token: string | undefined } {
  const port = Number(env.DASHBOARD_PORT || 8420);
  const host = !env.DASHBOARD_HOST || env.DASHBOARD_HOST === '0.0.0.0' ? '127.0.0.1' : env.DASHBOARD_HOST;
  return { url: `http://${host}:${port}`, token: env.DASHBOARD_TOKEN || undefined };
}
