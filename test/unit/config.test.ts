// loadConfig: the defaults an operator relies on, and fail-fast errors that name the variable.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.ts';

const KEY = 'k'.repeat(32);

describe('loadConfig defaults', () => {
  it('starts with safe local defaults when nothing is set', () => {
    const c = loadConfig({});
    expect(c.DASHBOARD_HOST).toBe('127.0.0.1');
    expect(c.DASHBOARD_PORT).toBe(8420);
    expect(c.AGENT_CDP_PORT).toBe(9223);
    expect(c.AGENT_WEBDRIVER_PORT).toBe(4444);
    expect(c.AGENT_PUBLIC_HOST).toBe('127.0.0.1');
    expect(c.SERVICE_MAX_SESSION_TIMEOUT).toBe(21600);
    expect(c.SERVICE_READY_WAIT_MS).toBe(45_000); // spec: ready wait 45 seconds
    expect(c.SESSION_RECORD_RETENTION).toBe(300);
    expect(c.DATABASE_URL).toBeUndefined(); // embedded PostgreSQL
    expect(c.SERVICE_JWT_SIGNING_KEY).toBeUndefined(); // generated secret file
    expect(c.DASHBOARD_TOKEN).toBeUndefined();
    expect(c.SERVICE_BOOTSTRAP_API_KEY).toBeUndefined();
    expect(c.dataDir).toBe(path.resolve('./.caravan'));
    expect(path.isAbsolute(c.dataDir)).toBe(true);
    expect(c.BROWSER_PROFILE_DIR).toBe('auto'); // in memory when /dev/shm allows
  });

  it('takes disk or an absolute path for the browser profiles', () => {
    expect(loadConfig({ BROWSER_PROFILE_DIR: 'disk' }).BROWSER_PROFILE_DIR).toBe('disk');
    expect(loadConfig({ BROWSER_PROFILE_DIR: '/mnt/ram/caravan' }).BROWSER_PROFILE_DIR).toBe('/mnt/ram/caravan');
  });

  it('treats empty variables as unset', () => {
    const c = loadConfig({ DASHBOARD_HOST: '', AGENT_CDP_PORT: '', SERVICE_JWT_SIGNING_KEY: '', DATABASE_URL: '' });
    expect(c.DASHBOARD_HOST).toBe('127.0.0.1');
    expect(c.AGENT_CDP_PORT).toBe(9223);
    expect(c.SERVICE_JWT_SIGNING_KEY).toBeUndefined();
    expect(c.DATABASE_URL).toBeUndefined();
  });

  it('reads numbers from their strings and resolves the data dir', () => {
    const c = loadConfig({ SERVICE_MAX_SESSION_TIMEOUT: '7200', DASHBOARD_PORT: '0', AGENT_CDP_PORT: '9300', CARAVAN_DATA_DIR: '/var/lib/caravan', SERVICE_JWT_SIGNING_KEY: KEY, DATABASE_URL: 'postgres://caravan@db.internal:5432/caravan' });
    expect(c.SERVICE_MAX_SESSION_TIMEOUT).toBe(7200);
    expect(c.DASHBOARD_PORT).toBe(0);
    expect(c.AGENT_CDP_PORT).toBe(9300);
    expect(c.dataDir).toBe('/var/lib/caravan');
    expect(c.SERVICE_JWT_SIGNING_KEY).toBe(KEY);
    expect(c.DATABASE_URL).toBe('postgres://caravan@db.internal:5432/caravan');
  });
});

describe('loadConfig refuses bad values and names the variable', () => {
  const bad = (env: Record<string, string>) => {
    try {
      loadConfig(env);
    } catch (err) {
      return (err as Error).message;
    }
    throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
  };

  it.each<[string, Record<string, string>, RegExp]>([
    ['a port that is not a number', { AGENT_CDP_PORT: 'abc' }, /AGENT_CDP_PORT/],
    ['a port above 65535', { DASHBOARD_PORT: '70000' }, /DASHBOARD_PORT/],
    ['a negative port', { AGENT_WEBDRIVER_PORT: '-1' }, /AGENT_WEBDRIVER_PORT/],
    ['a fractional port', { DASHBOARD_PORT: '80.5' }, /DASHBOARD_PORT/],
    ['a short signing key', { SERVICE_JWT_SIGNING_KEY: 'short' }, /SERVICE_JWT_SIGNING_KEY.*at least 32/],
    ['a short dashboard token', { DASHBOARD_TOKEN: 'short' }, /DASHBOARD_TOKEN.*at least 16/],
    ['a bootstrap key without a project id', { SERVICE_BOOTSTRAP_API_KEY: 'b'.repeat(32) }, /SERVICE_BOOTSTRAP_PROJECT_ID/],
    ['a bootstrap project id without a key', { SERVICE_BOOTSTRAP_PROJECT_ID: 'default' }, /SERVICE_BOOTSTRAP_API_KEY/],
    ['a short bootstrap key', { SERVICE_BOOTSTRAP_API_KEY: 'short', SERVICE_BOOTSTRAP_PROJECT_ID: 'default' }, /SERVICE_BOOTSTRAP_API_KEY.*at least 20/],
    ['a zero session timeout ceiling', { SERVICE_MAX_SESSION_TIMEOUT: '0' }, /SERVICE_MAX_SESSION_TIMEOUT/],
    ['a session timeout ceiling that is not a number', { SERVICE_MAX_SESSION_TIMEOUT: 'six hours' }, /SERVICE_MAX_SESSION_TIMEOUT/],
    ['a database URL that is not a URL', { DATABASE_URL: 'localhost:5432' }, /DATABASE_URL/],
    ['an unknown event bus', { EVENT_BUS: 'kafka' }, /EVENT_BUS/],
    ['an unknown log level', { LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
    ['a TLS certificate without its key', { AGENT_TLS_CERT: '/etc/cert.pem' }, /AGENT_TLS_KEY/],
    ['a relative profile dir', { BROWSER_PROFILE_DIR: 'profiles' }, /BROWSER_PROFILE_DIR must be auto, disk or an absolute path/],
  ])('fails fast on %s', (_what, env, names) => {
    const message = bad(env);
    expect(message).toMatch(/^invalid configuration/);
    expect(message).toMatch(names);
  });

  it('names every bad variable in one error', () => {
    const message = bad({ AGENT_CDP_PORT: 'abc', SERVICE_JWT_SIGNING_KEY: 'short', LOG_LEVEL: 'loud' });
    expect(message).toMatch(/AGENT_CDP_PORT/);
    expect(message).toMatch(/SERVICE_JWT_SIGNING_KEY/);
    expect(message).toMatch(/LOG_LEVEL/);
  });
});
