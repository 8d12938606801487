// The connection token (JWT) contract shared by the control plane (signs) and the node agent
// (verifies): issuer, audiences and the claims the spec requires.
import { z } from 'zod';

export const TOKEN_ISSUER = 'caravan';
/** Audience of the connection token handed to SDK callers (spec: `cdp-access`). */
export const CDP_AUDIENCE = 'cdp-access';
/** Audience of the per-session credential a launcher uses to report for its own session. */
export const LAUNCHER_AUDIENCE = 'caravan-launcher';
/** Audience of a node agent's credential. */
export const NODE_AUDIENCE = 'caravan-node';

export const CdpClaims = z.object({
  iss: z.literal(TOKEN_ISSUER),
  sub: z.string().min(1),
  aud: z.array(z.string()).refine((a) => a.includes(CDP_AUDIENCE), 'aud must contain cdp-access'),
  exp: z.number().int(),
  iat: z.number().int(),
  nbf: z.number().int(),
  jti: z.string().min(1),
  sessionId: z.string().min(1),
  projectId: z.string().min(1),
  userId: z.string().optional(),
  nonce: z.string().min(1),
  ipAddress: z.string().optional(),
});
export type CdpClaims = z.infer<typeof CdpClaims>;

export const LauncherClaims = z.object({
  iss: z.literal(TOKEN_ISSUER),
  aud: z.union([z.literal(LAUNCHER_AUDIENCE), z.array(z.string()).refine((a) => a.includes(LAUNCHER_AUDIENCE))]),
  sub: z.string().min(1),
  sessionId: z.string().min(1),
});
export type LauncherClaims = z.infer<typeof LauncherClaims>;

export const NodeClaims = z.object({
  iss: z.literal(TOKEN_ISSUER),
  aud: z.union([z.literal(NODE_AUDIENCE), z.array(z.string()).refine((a) => a.includes(NODE_AUDIENCE))]),
  sub: z.string().min(1),
  nodeId: z.string().min(1),
});
export type NodeClaims = z.infer<typeof NodeClaims>;

/** Where the HMAC secret comes from (env, a file under the data dir, a secrets store). */
export interface SecretSource {
  get(): Promise<Uint8Array>;
}

/** Wraps a source so that the secret is fetched at most once per `ttlMs` (spec: 5 minutes). */
export function cachedSecret(source: SecretSource, ttlMs = 5 * 60_000, now: () => number = Date.now): SecretSource {
  // The pending fetch is shared, so callers that arrive together fetch once.
  let value: Promise<Uint8Array> | undefined;
  let fetchedAt = 0;
  return {
    get() {
      if (!value || now() - fetchedAt > ttlMs) {
        const fetching = source.get();
        value = fetching;
        fetchedAt = now();
        // A failed fetch is not cached: the next call tries again.
        fetching.catch(() => { if (value === fetching) value = undefined; });
      }
      return value;
    },
  };
}
