// The connection token (spec "Connection token (JWT)"): what signCdpToken signs, that any
// tampering is refused, and how often the signing secret is fetched.
import { jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { signCdpToken } from '../../server/auth/tokens.ts';
import { cachedSecret, CdpClaims, type SecretSource } from '../../schema/token.ts';

const SECRET = 'unit-test-secret-0123456789-0123456789';
const key = new TextEncoder().encode(SECRET);
const secrets: SecretSource = { get: async () => key };

const now = Math.floor(Date.now() / 1000);
const input = {
  sessionId: 'sess_00000000-0000-4000-8000-000000000001',
  projectId: 'proj_a',
  userId: 'user-1',
  ipAddress: '203.0.113.7',
  issuedAt: now,
  expiresAt: now + 3600,
};

const verify = (token: string, k: Uint8Array = key) => jwtVerify(token, k, { algorithms: ['HS256'] });

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** The token with the character at `i` replaced. Inside a section the character's 6-bit value
 *  gets its top bit flipped: that always changes the decoded bytes (a change of only the low
 *  bits of a section's last character can be a non-canonical spelling of the same bytes). */
function tamper(token: string, i: number): string {
  const c = token[i]!;
  const v = B64URL.indexOf(c);
  const replacement = v < 0 ? 'A' : B64URL[v ^ 0b100000]!;
  return token.slice(0, i) + replacement + token.slice(i + 1);
}

describe('signCdpToken', () => {
  it('signs a token that verifies with the shared secret and carries every claim of the spec', async () => {
    const token = await signCdpToken(secrets, input);
    const { payload, protectedHeader } = await verify(token);
    expect(protectedHeader.alg).toBe('HS256');
    expect(payload.iss).toEqual(expect.any(String));
    expect(payload.iss!.length).toBeGreaterThan(0);
    expect(payload.sub).toBe(input.sessionId);
    expect(payload.aud).toEqual(expect.arrayContaining(['cdp-access']));
    expect(Array.isArray(payload.aud)).toBe(true);
    expect(payload.iat).toBe(now);
    expect(payload.nbf).toBe(now);
    expect(payload.exp).toBe(now + 3600);
    expect(payload.jti).toEqual(expect.any(String));
    expect(payload.sessionId).toBe(input.sessionId);
    expect(payload.projectId).toBe(input.projectId);
    expect(payload.userId).toBe('user-1');
    expect(payload.ipAddress).toBe('203.0.113.7');
    expect(payload.nonce).toEqual(expect.any(String));
    const claims = CdpClaims.parse(payload);
    expect(claims.sessionId).toBe(input.sessionId);
  });

  it('omits userId and ipAddress when they are not given, and the claims still parse', async () => {
    const { userId: _u, ipAddress: _ip, ...bare } = input;
    const { payload } = await verify(await signCdpToken(secrets, bare));
    expect(payload).not.toHaveProperty('userId');
    expect(payload).not.toHaveProperty('ipAddress');
    expect(CdpClaims.safeParse(payload).success).toBe(true);
  });

  it('gives every token its own random nonce and jti', async () => {
    const tokens = await Promise.all(Array.from({ length: 20 }, () => signCdpToken(secrets, input)));
    const payloads = await Promise.all(tokens.map(async (t) => (await verify(t)).payload));
    expect(new Set(payloads.map((p) => p.nonce)).size).toBe(20);
    expect(new Set(payloads.map((p) => p.jti)).size).toBe(20);
    for (const p of payloads) expect(Buffer.from(String(p.nonce), 'base64url').length).toBeGreaterThanOrEqual(16);
  });

  it('refuses the token when any single character of header, payload or signature is changed', async () => {
    const token = await signCdpToken(secrets, input);
    const [h, p, s] = token.split('.');
    expect(h && p && s).toBeTruthy();
    const accepted: number[] = [];
    for (let i = 0; i < token.length; i++) {
      const bad = tamper(token, i);
      expect(bad).not.toBe(token);
      const ok = await verify(bad).then(() => true, () => false);
      if (ok) accepted.push(i);
    }
    expect(accepted, `positions whose change still verified (token length ${token.length})`).toEqual([]);
  });

  it('refuses a token signed with another secret', async () => {
    const other: SecretSource = { get: async () => new TextEncoder().encode('another-secret-0123456789-0123456789') };
    const token = await signCdpToken(other, input);
    await expect(verify(token)).rejects.toThrow();
  });
});

describe('cachedSecret', () => {
  function counting() {
    let calls = 0;
    const source: SecretSource = {
      async get() {
        calls++;
        return new TextEncoder().encode(`secret-${calls}`);
      },
    };
    return { source, calls: () => calls };
  }

  it('fetches the secret at most once per TTL and again once the TTL has passed', async () => {
    const { source, calls } = counting();
    let t = 1_000_000;
    const cached = cachedSecret(source, 300_000, () => t);
    const first = await cached.get();
    expect(calls()).toBe(1);
    for (const step of [1, 1000, 60_000, 299_999]) {
      t = 1_000_000 + step;
      expect(await cached.get()).toBe(first);
    }
    expect(calls()).toBe(1);
    t = 1_000_000 + 300_001;
    const second = await cached.get();
    expect(calls()).toBe(2);
    expect(new TextDecoder().decode(second)).toBe('secret-2');
    t += 1000;
    await cached.get();
    expect(calls()).toBe(2);
  });

  it('uses a 5 minute TTL by default', async () => {
    const { source, calls } = counting();
    let t = 0;
    const cached = cachedSecret(source, undefined, () => t);
    await cached.get();
    t = 5 * 60_000;
    await cached.get();
    expect(calls()).toBe(1);
    t = 5 * 60_000 + 1;
    await cached.get();
    expect(calls()).toBe(2);
  });

  it('fetches once when many callers ask at the same time', async () => {
    const { source, calls } = counting();
    const cached = cachedSecret(source, 300_000, () => 0);
    const values = await Promise.all(Array.from({ length: 10 }, () => cached.get()));
    expect(calls()).toBe(1);
    expect(new Set(values).size).toBe(1);
  });

  it('retries on the next call when a fetch fails', async () => {
    let calls = 0;
    const flaky: SecretSource = {
      async get() {
        calls++;
        if (calls === 1) throw new Error('secrets store unavailable');
        return new TextEncoder().encode('ok');
      },
    };
    const cached = cachedSecret(flaky, 300_000, () => 0);
    await expect(cached.get()).rejects.toThrow('secrets store unavailable');
    expect(new TextDecoder().decode(await cached.get())).toBe('ok');
    expect(calls).toBe(2);
  });
});
