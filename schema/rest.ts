// Request shapes of the Browserbase-compatible /v1 API (see the spec's endpoint tables).
import { z } from 'zod';
import { SdkStatus } from './states.ts';
import { Viewport } from './agent.ts';

export const REGIONS = ['us-east-1', 'us-west-2', 'eu-central-1', 'ap-southeast-1'] as const;
/** Serialized size limit of userMetadata (the spec leaves it open; docs/decisions.md). */
export const USER_METADATA_MAX_BYTES = 16 * 1024;

const UserMetadata = z
  .record(z.string(), z.unknown())
  .refine((m) => Buffer.byteLength(JSON.stringify(m)) <= USER_METADATA_MAX_BYTES, {
    message: `userMetadata must be at most ${USER_METADATA_MAX_BYTES} bytes of JSON`,
  })
  .refine((m) => m.userId === undefined || typeof m.userId === 'string', { message: 'userMetadata.userId must be a string' });

export const BrowserSettings = z
  .object({
    viewport: Viewport.strict().optional(),
    context: z.object({ id: z.string().regex(/^ctx_[A-Za-z0-9_-]{1,100}$/, 'context.id must look like ctx_<id>'), persist: z.boolean().optional() }).strict().optional(),
  })
  // Browserbase settings Caravan accepts and ignores (fingerprint, blockAds, ...): docs/decisions.md.
  .catchall(z.unknown());

export const CreateSessionBody = z
  .object({
    projectId: z.string().min(1).max(100).optional(),
    browserSettings: BrowserSettings.optional(),
    keepAlive: z.boolean().optional(),
    timeout: z.number().int('timeout must be a whole number of seconds').min(60, 'timeout must be >= 60').optional(),
    userMetadata: UserMetadata.optional(),
    region: z.enum(REGIONS, { message: `region must be one of ${REGIONS.join(', ')}` }).optional(),
    extensionId: z.string().optional(),
    proxies: z.union([z.boolean(), z.array(z.unknown())]).optional(),
    proxySettings: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();
export type CreateSessionBody = z.infer<typeof CreateSessionBody>;

export const UpdateSessionBody = z
  .object({
    projectId: z.string().min(1).optional(),
    status: z.literal('REQUEST_RELEASE', { message: 'status must be REQUEST_RELEASE' }),
  })
  .strict();

export const ListSessionsQuery = z
  .object({
    q: z.string().max(4096).optional(),
    status: z.string().toUpperCase().pipe(SdkStatus).optional(),
  })
  .strict();

export const CdpUrlBody = z
  .object({ expiresIn: z.number().int().min(1).max(86_400).optional() })
  .strict();
