// The dashboard session cookie minted by POST /api/auth/session: HttpOnly, SameSite=Strict,
// Path=/, 12 hours, Secure over https, its value `<expiry ms>.<nonce>.<HMAC-SHA256>` signed with
// DASHBOARD_TOKEN (so rotating the token ends every session). Node's crypto only.
import crypto from 'node:crypto';

export const SESSION_COOKIE = 'caravan_dashboard';
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

const sign = (key: string, payload: string) => crypto.createHmac('sha256', key).update(`caravan-dashboard-session.v1.${payload}`).digest('base64url');

/** Constant-time comparison of two secrets of any length. */
export function sameSecret(a: string, b: string): boolean {
  const ha = crypto.createHash('sha256').update(a).digest();
  const hb = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(ha, hb);
}

export function mintSessionCookie(key: string, now: number, secure: boolean): { header: string; expiresAt: Date } {
  const expires = now + SESSION_TTL_MS;
  const payload = `${expires}.${crypto.randomBytes(12).toString('base64url')}`;
  const value = `${payload}.${sign(key, payload)}`;
  const attrs = [`${SESSION_COOKIE}=${value}`, 'Path=/', `Max-Age=${SESSION_TTL_MS / 1000}`, `Expires=${new Date(expires).toUTCString()}`, 'HttpOnly', 'SameSite=Strict'];
  if (secure) attrs.push('Secure');
  return { header: attrs.join('; '), expiresAt: new Date(expires) };
}

/** The session cookie's value from a Cookie header, if any. */
export function sessionCookieValue(cookieHeader: string | undefined): string | undefined {
  for (const part of (cookieHeader ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === SESSION_COOKIE) return part.slice(i + 1).trim();
  }
  return undefined;
}

export function validSessionCookie(cookieHeader: string | undefined, key: string, now: number): boolean {
  const value = sessionCookieValue(cookieHeader);
  const m = /^(\d{1,16})\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]{43})$/.exec(value ?? '');
  if (!m) return false;
  const payload = `${m[1]}.${m[2]}`;
  return sameSecret(m[3]!, sign(key, payload)) && Number(m[1]) > now;
}
