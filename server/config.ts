// The control plane's configuration: every environment variable it reads, parsed once with
// zod. Nothing else in server/ reads process.env.
import path from 'node:path';
import { z } from 'zod';

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
    SCHEDULER: z.enum(['local']).default('local'),
    CARAVAN_NODE_ID: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/).default('local'),
    CHROME_PATH: z.string().min(1).default('/usr/bin/chromium'),
    CHROMEDRIVER_PATH: z.string().min(1).default('/usr/bin/chromedriver'),
    AGENT_CDP_PORT: port.default(9223),
    AGENT_CONTROL_PORT: port.default(0),
    AGENT_WEBDRIVER_PORT: port.default(4444),
    AGENT_PUBLIC_HOST: z.string().min(1).default('127.0.0.1'),
    AGENT_BIND_HOST: z.string().min(1).optional(),
    AGENT_TLS_CERT: z.string().min(1).optional(),
    AGENT_TLS_KEY: z.string().min(1).optional(),
    AGENT_IDLE_GRACE_MS: z.coerce.number().int().nonnegative().default(30_000),
    POOL_SIZE: z.coerce.number().int().min(0).max(64).default(2),
    NODE_CAPACITY: z.coerce.number().int().positive().default(16),
    S3_ENDPOINT: z.string().url('S3_ENDPOINT must be a URL').optional(),
    S3_REGION: z.string().min(1).default('us-east-1'),
    S3_BUCKET: z.string().min(3).optional(),
    S3_FORCE_PATH_STYLE: bool.optional(),
    CONTEXT_UPLOAD_WINDOW: z.coerce.number().int().min(1).max(7 * 24 * 3600).default(900),
    CONTEXT_MAX_BYTES: z.coerce.number().int().positive().default(512 * 1024 * 1024),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    LOG_PRETTY: bool.default(false),
  })
  .refine((c) => !c.SERVICE_BOOTSTRAP_API_KEY === !c.SERVICE_BOOTSTRAP_PROJECT_ID, {
    message: 'SERVICE_BOOTSTRAP_API_KEY and SERVICE_BOOTSTRAP_PROJECT_ID go together: set both or neither',
  })
  .refine((c) => !c.AGENT_TLS_CERT === !c.AGENT_TLS_KEY, {
    message: 'AGENT_TLS_CERT and AGENT_TLS_KEY go together: set both or neither',
  });

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
