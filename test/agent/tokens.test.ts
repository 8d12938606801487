// Verification of connection and launcher tokens.
import { SignJWT, UnsecuredJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { TokenError, verifyCdpToken, verifyLauncherToken } from '../../agent/tokens.ts';
import { CDP_AUDIENCE, TOKEN_ISSUER } from '../../schema/token.ts';
import { mintCdpToken, mintLauncherToken, SECRET, secrets, tamper } from './helpers.ts';

describe('verifyCdpToken', () => {
  it('returns the claims of a valid token', async () => {
    const claims = await verifyCdpToken(secrets, await mintCdpToken({ sessionId: 'sess_1', projectId: 'proj_9' }));
    expect(claims).toMatchObject({ iss: TOKEN_ISSUER, sub: 'sess_1', sessionId: 'sess_1', projectId: 'proj_9', aud: [CDP_AUDIENCE] });
  });

  it('checks expiry and not-before against the given time', async () => {
    const token = await mintCdpToken({ sessionId: 'sess_1', expIn: 600 });
    await expect(verifyCdpToken(secrets, token, new Date(Date.now() + 3_600_000))).rejects.toThrow(/expired/);
    await expect(verifyCdpToken(secrets, token, new Date(Date.now() - 3_600_000))).rejects.toThrow(/nbf/);
  });

  it('refuses tampered tokens, other algorithms, unsigned tokens and missing claims', async () => {
    await expect(verifyCdpToken(secrets, tamper(await mintCdpToken({ sessionId: 's' })))).rejects.toThrow(TokenError);
    const now = Math.floor(Date.now() / 1000);
    const base = { sessionId: 's', projectId: 'p', nonce: 'n' };
    const hs512 = await new SignJWT(base).setProtectedHeader({ alg: 'HS512' }).setIssuer(TOKEN_ISSUER).setSubject('s')
      .setAudience([CDP_AUDIENCE]).setIssuedAt(now).setNotBefore(now).setExpirationTime(now + 60).setJti('j').sign(SECRET);
    await expect(verifyCdpToken(secrets, hs512)).rejects.toThrow(/algorithm not allowed/);
    const unsigned = new UnsecuredJWT(base).setIssuer(TOKEN_ISSUER).setSubject('s').setAudience([CDP_AUDIENCE])
      .setIssuedAt(now).setNotBefore(now).setExpirationTime(now + 60).setJti('j').encode();
    await expect(verifyCdpToken(secrets, unsigned)).rejects.toThrow(TokenError);
    const noProject = await new SignJWT({ sessionId: 's', nonce: 'n' }).setProtectedHeader({ alg: 'HS256' }).setIssuer(TOKEN_ISSUER)
      .setSubject('s').setAudience([CDP_AUDIENCE]).setIssuedAt(now).setNotBefore(now).setExpirationTime(now + 60).setJti('j').sign(SECRET);
    await expect(verifyCdpToken(secrets, noProject)).rejects.toThrow(/projectId/);
    await expect(verifyCdpToken(secrets, '')).rejects.toThrow(/missing token/);
  });

  it('does not accept a launcher token as a connection token', async () => {
    await expect(verifyCdpToken(secrets, await mintLauncherToken('sess_1'))).rejects.toThrow(TokenError);
  });
});

describe('verifyLauncherToken', () => {
  it('accepts a token for the same session only', async () => {
    const token = await mintLauncherToken('sess_1');
    await expect(verifyLauncherToken(secrets, token, 'sess_1')).resolves.toMatchObject({ sessionId: 'sess_1' });
    await expect(verifyLauncherToken(secrets, token, 'sess_2')).rejects.toThrow(/not for this session/);
  });

  it('does not accept a connection token', async () => {
    await expect(verifyLauncherToken(secrets, await mintCdpToken({ sessionId: 'sess_1' }), 'sess_1')).rejects.toThrow(TokenError);
  });
});
