// Verifies the connection token (CDP/WebDriver access) and the launcher token with the shared HS256 secret.
import { jwtVerify, type JWTPayload } from 'jose';
import {
  CDP_AUDIENCE, CdpClaims, LAUNCHER_AUDIENCE, LauncherClaims, TOKEN_ISSUER, type SecretSource,
} from '../schema/token.ts';

/** Allowed clock skew between the control plane that signs and the node that verifies. */
export const CLOCK_TOLERANCE_S = 30;

/** A token that failed verification; the message is safe to return to the client. */
export class TokenError extends Error {
  override name = 'TokenError';
}

async function verify(secrets: SecretSource, jwt: string, audience: string, now: Date | undefined, required: string[]): Promise<JWTPayload> {
  if (!jwt) throw new TokenError('missing token');
  try {
    const { payload } = await jwtVerify(jwt, await secrets.get(), {
      algorithms: ['HS256'],
      issuer: TOKEN_ISSUER,
      audience,
      requiredClaims: required,
      clockTolerance: CLOCK_TOLERANCE_S,
      ...(now ? { currentDate: now } : {}),
    });
    return payload;
  } catch (err) {
    throw new TokenError(`invalid token: ${reason(err)}`);
  }
}

function reason(err: unknown): string {
  const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : '';
  switch (code) {
    case 'ERR_JWT_EXPIRED': return 'expired';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED': return err instanceof Error ? err.message : 'claim check failed';
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED': return 'bad signature';
    case 'ERR_JOSE_ALG_NOT_ALLOWED': return 'algorithm not allowed';
    default: return 'malformed';
  }
}

/** Verifies a connection token: HS256, issuer, `cdp-access` audience, exp and nbf, then the claim schema. */
export async function verifyCdpToken(secrets: SecretSource, jwt: string, now?: Date): Promise<CdpClaims> {
  const payload = await verify(secrets, jwt, CDP_AUDIENCE, now, ['exp', 'nbf', 'iat', 'sub', 'jti']);
  const claims = CdpClaims.safeParse(payload);
  if (!claims.success) throw new TokenError(`invalid token: ${claims.error.issues.map((i) => i.path.join('.')).join(', ')} claim(s) missing or wrong`);
  return claims.data;
}

/** Verifies a launcher token and that it was issued for `sessionId`. */
export async function verifyLauncherToken(secrets: SecretSource, jwt: string, sessionId: string, now?: Date): Promise<LauncherClaims> {
  const payload = await verify(secrets, jwt, LAUNCHER_AUDIENCE, now, []);
  const claims = LauncherClaims.safeParse(payload);
  if (!claims.success) throw new TokenError('invalid token: launcher claims missing or wrong');
  if (claims.data.sessionId !== sessionId) throw new TokenError('token is not for this session');
  return claims.data;
}

/** Pulls a bearer token from an `Authorization` header value. */
export function bearer(header: string | undefined): string | undefined {
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return m?.[1];
}
