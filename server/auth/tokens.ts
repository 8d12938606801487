// Signs the tokens the control plane hands out: the connection token (spec claims), the
// session-scoped launcher credential and the node agent credential.
import crypto from 'node:crypto';
import { SignJWT } from 'jose';
import { CDP_AUDIENCE, LAUNCHER_AUDIENCE, NODE_AUDIENCE, TOKEN_ISSUER, type SecretSource } from '../../schema/token.ts';

export interface CdpTokenInput {
  sessionId: string;
  projectId: string;
  userId?: string;
  ipAddress?: string;
  /** Unix seconds. */
  issuedAt: number;
  expiresAt: number;
}

export async function signCdpToken(secrets: SecretSource, t: CdpTokenInput): Promise<string> {
  const claims: Record<string, unknown> = {
    sessionId: t.sessionId,
    projectId: t.projectId,
    nonce: crypto.randomBytes(16).toString('base64url'),
  };
  if (t.userId) claims.userId = t.userId;
  if (t.ipAddress) claims.ipAddress = t.ipAddress;
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(TOKEN_ISSUER)
    .setSubject(t.sessionId)
    .setAudience([CDP_AUDIENCE])
    .setIssuedAt(t.issuedAt)
    .setNotBefore(t.issuedAt)
    .setExpirationTime(t.expiresAt)
    .setJti(crypto.randomUUID())
    .sign(await secrets.get());
}

export async function signLauncherToken(secrets: SecretSource, sessionId: string, expiresAt: number): Promise<string> {
  return new SignJWT({ sessionId })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(TOKEN_ISSUER)
    .setSubject(sessionId)
    .setAudience(LAUNCHER_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(expiresAt + 600)
    .sign(await secrets.get());
}

export async function signNodeToken(secrets: SecretSource, nodeId: string): Promise<string> {
  return new SignJWT({ nodeId })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(TOKEN_ISSUER)
    .setSubject(nodeId)
    .setAudience(NODE_AUDIENCE)
    .setIssuedAt()
    .sign(await secrets.get());
}
