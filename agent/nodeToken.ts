// The standalone agent's node credential (audience caravan-node): signed by the agent itself
// with the shared SERVICE_JWT_SIGNING_KEY it already holds to verify connection tokens, short
// lived, and signed again before it runs out (docs/decisions.md, "Nomad").
import { SignJWT } from 'jose';
import { NODE_AUDIENCE, TOKEN_ISSUER, type SecretSource } from '../schema/token.ts';

export function nodeTokenSigner(secrets: SecretSource, nodeId: string, ttlS = 3600, now: () => number = Date.now): () => Promise<string> {
  let token: string | undefined;
  let renewAt = 0;
  return async () => {
    if (!token || now() >= renewAt) {
      const iat = Math.floor(now() / 1000);
      token = await new SignJWT({ nodeId })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer(TOKEN_ISSUER)
        .setSubject(nodeId)
        .setAudience(NODE_AUDIENCE)
        .setIssuedAt(iat)
        .setExpirationTime(iat + ttlS)
        .sign(await secrets.get());
      renewAt = now() + (ttlS * 1000) / 2;
    }
    return token;
  };
}
