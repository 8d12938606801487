// The env schemas of the launcher and of the standalone agent.
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { parseAgentEnv, parseLauncherEnv } from '../../agent/config.ts';
import { findSocat } from '../../agent/proxy/relay.ts';
import { defaultChromePath } from '../../agent/launcher/chromePath.ts';

const launcherEnv = {
  CARAVAN_SESSION_ID: 'sess_1',
  CARAVAN_LAUNCHER_TOKEN: 'tok',
  CARAVAN_CONTROL_URL: 'http://127.0.0.1:3000/',
  CARAVAN_AGENT_URL: 'http://127.0.0.1:9224',
};

const agentEnv = {
  CARAVAN_NODE_ID: 'node-1',
  CARAVAN_CONTROL_URL: 'https://caravan.example.com',
  CARAVAN_NODE_TOKEN: 'node-token',
  SERVICE_JWT_SIGNING_KEY: 'x'.repeat(32),
};

describe('parseLauncherEnv', () => {
  it('applies defaults', () => {
    expect(parseLauncherEnv(launcherEnv)).toEqual({
      pool: false,
      standby: false,
      ipcReady: false,
      context: undefined,
      sessionId: 'sess_1',
      launcherToken: 'tok',
      controlUrl: 'http://127.0.0.1:3000',
      agentUrl: 'http://127.0.0.1:9224',
      nodeId: undefined,
      chromePath: defaultChromePath(),
      viewport: undefined,
      keepAlive: false,
      watchStdin: false,
      workDir: os.tmpdir(),
      logLevel: 'info',
    });
  });

  it('takes a pooled launcher without a session, and refuses a context for it', () => {
    const pooled = { ...launcherEnv, CARAVAN_POOL: 'true', CARAVAN_SESSION_ID: undefined, CARAVAN_LAUNCHER_TOKEN: undefined };
    expect(parseLauncherEnv(pooled)).toMatchObject({ pool: true, sessionId: '', launcherToken: '' });
    expect(() => parseLauncherEnv({ ...pooled, CARAVAN_CONTEXT_GET_URL: 'http://127.0.0.1:1/x' })).toThrow(/CARAVAN_POOL: a pooled launcher cannot take a context/);
  });

  it('takes a standby launcher without a session, not both modes, and no context from its environment', () => {
    const standby = { ...launcherEnv, CARAVAN_STANDBY: 'true', CARAVAN_IPC_READY: 'true', CARAVAN_SESSION_ID: undefined, CARAVAN_LAUNCHER_TOKEN: undefined };
    expect(parseLauncherEnv(standby)).toMatchObject({ standby: true, pool: false, ipcReady: true, sessionId: '' });
    expect(() => parseLauncherEnv({ ...standby, CARAVAN_POOL: 'true' })).toThrow(/CARAVAN_STANDBY: a launcher is pooled or standby, not both/);
    expect(() => parseLauncherEnv({ ...standby, CARAVAN_CONTEXT_PUT_URL: 'http://127.0.0.1:1/x' })).toThrow(/CARAVAN_STANDBY: a standby launcher gets its context with its assignment/);
  });

  it('parses the context URLs and the archive limit', () => {
    const c = parseLauncherEnv({ ...launcherEnv, CARAVAN_CONTEXT_GET_URL: 'http://s3/get', CARAVAN_CONTEXT_PUT_URL: 'http://s3/put', CARAVAN_CONTEXT_MAX_BYTES: '1000' });
    expect(c.context).toEqual({ getUrl: 'http://s3/get', putUrl: 'http://s3/put', maxBytes: 1000 });
  });

  it('parses viewport, booleans, paths', () => {
    const c = parseLauncherEnv({
      ...launcherEnv, CARAVAN_VIEWPORT: '1920x1080', CARAVAN_KEEP_ALIVE: 'true', CARAVAN_WATCH_STDIN: 'TRUE',
      CHROME_PATH: '/usr/lib/chromium/chromium-headless-shell', CARAVAN_WORK_DIR: '/var/lib/caravan', CARAVAN_NODE_ID: 'n1',
      CARAVAN_PROFILE_DIR: '/dev/shm/caravan-x',
    });
    expect(c).toMatchObject({ viewport: { width: 1920, height: 1080 }, keepAlive: true, watchStdin: true, workDir: '/var/lib/caravan', nodeId: 'n1', profileDir: '/dev/shm/caravan-x' });
    expect(parseLauncherEnv(launcherEnv).profileDir).toBeUndefined();
  });

  it.each([
    [{ CARAVAN_SESSION_ID: undefined }, /CARAVAN_SESSION_ID: is required/],
    [{ CARAVAN_LAUNCHER_TOKEN: '' }, /CARAVAN_LAUNCHER_TOKEN: is required/],
    [{ CARAVAN_CONTROL_URL: 'ftp://x' }, /CARAVAN_CONTROL_URL: expected an http\(s\) URL/],
    [{ CARAVAN_AGENT_URL: undefined }, /CARAVAN_AGENT_URL: is required/],
    [{ CARAVAN_VIEWPORT: '1920*1080' }, /CARAVAN_VIEWPORT: expected WIDTHxHEIGHT/],
    [{ CARAVAN_VIEWPORT: '10x10' }, /CARAVAN_VIEWPORT/],
    [{ CARAVAN_KEEP_ALIVE: 'yes please' }, /CARAVAN_KEEP_ALIVE: expected true or false/],
    [{ CARAVAN_PROFILE_DIR: 'shm/profiles' }, /CARAVAN_PROFILE_DIR: must be an absolute path/],
  ])('names the bad variable (%o)', (patch, message) => {
    expect(() => parseLauncherEnv({ ...launcherEnv, ...patch })).toThrow(message);
  });
});

describe('parseAgentEnv', () => {
  it('applies defaults', () => {
    expect(parseAgentEnv(agentEnv)).toEqual({
      cdpPort: 9223,
      publicHost: '127.0.0.1',
      bindHost: '127.0.0.1',
      controlPort: 9224,
      webdriverPort: 4444,
      chromedriverPath: '/usr/bin/chromedriver',
      tls: undefined,
      idleGraceMs: 30_000,
      relay: 'auto',
      path: '/usr/local/bin:/usr/bin:/bin',
      nodeId: 'node-1',
      controlUrl: 'https://caravan.example.com',
      nodeToken: 'node-token',
      nomadNodeId: undefined,
      heartbeatMs: 5_000,
      capacity: 16,
      signingKey: 'x'.repeat(32),
      logLevel: 'info',
    });
  });

  it('signs its own node credential when CARAVAN_NODE_TOKEN is unset, and reads the node settings', () => {
    const c = parseAgentEnv({ ...agentEnv, CARAVAN_NODE_TOKEN: undefined, AGENT_HEARTBEAT_MS: '500', NODE_CAPACITY: '4', CARAVAN_NOMAD_NODE_ID: 'f1e2d3c4' });
    expect(c).toMatchObject({ nodeToken: undefined, heartbeatMs: 500, capacity: 4, nomadNodeId: 'f1e2d3c4' });
  });

  it('binds all interfaces when the public host is not loopback, unless told otherwise', () => {
    expect(parseAgentEnv({ ...agentEnv, AGENT_PUBLIC_HOST: '203.0.113.7' }).bindHost).toBe('0.0.0.0');
    expect(parseAgentEnv({ ...agentEnv, AGENT_PUBLIC_HOST: 'localhost' }).bindHost).toBe('127.0.0.1');
    expect(parseAgentEnv({ ...agentEnv, AGENT_PUBLIC_HOST: '203.0.113.7', AGENT_BIND_HOST: '10.0.0.2' }).bindHost).toBe('10.0.0.2');
  });

  it('parses ports, grace and TLS files', () => {
    const c = parseAgentEnv({
      ...agentEnv, AGENT_CDP_PORT: '0', AGENT_CONTROL_PORT: '19224', AGENT_WEBDRIVER_PORT: '14444', AGENT_IDLE_GRACE_MS: '500',
      AGENT_TLS_CERT: '/etc/caravan/cert.pem', AGENT_TLS_KEY: '/etc/caravan/key.pem',
    });
    expect(c).toMatchObject({ cdpPort: 0, controlPort: 19224, webdriverPort: 14444, idleGraceMs: 500, tls: { certFile: '/etc/caravan/cert.pem', keyFile: '/etc/caravan/key.pem' } });
  });

  it.each([
    [{ AGENT_CDP_PORT: '70000' }, /AGENT_CDP_PORT: expected a port number/],
    [{ AGENT_WEBDRIVER_PORT: 'http' }, /AGENT_WEBDRIVER_PORT/],
    [{ AGENT_IDLE_GRACE_MS: '-1' }, /AGENT_IDLE_GRACE_MS/],
    [{ AGENT_RELAY: 'splice' }, /AGENT_RELAY: expected auto, socat or node/],
    [{ AGENT_TLS_CERT: '/cert.pem' }, /AGENT_TLS_KEY: AGENT_TLS_CERT and AGENT_TLS_KEY must be set together/],
    [{ AGENT_TLS_KEY: '/key.pem' }, /AGENT_TLS_CERT: /],
    [{ AGENT_HEARTBEAT_MS: '0' }, /AGENT_HEARTBEAT_MS: must be at least 1/],
    [{ NODE_CAPACITY: 'lots' }, /NODE_CAPACITY/],
    [{ SERVICE_JWT_SIGNING_KEY: 'short' }, /SERVICE_JWT_SIGNING_KEY: must be at least 32 characters/],
    [{ CARAVAN_NODE_ID: undefined }, /CARAVAN_NODE_ID/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
  ])('names the bad variable (%o)', (patch, message) => {
    expect(() => parseAgentEnv({ ...agentEnv, ...patch })).toThrow(message);
  });
});

describe('findSocat (AGENT_RELAY)', () => {
  const PATH = process.env.PATH ?? '';

  it('uses socat from PATH when it runs (auto, socat), and never with node', () => {
    expect(findSocat('auto', PATH)).toMatch(/\/socat$/);
    expect(findSocat('socat', PATH)).toMatch(/\/socat$/);
    expect(findSocat('node', PATH)).toBeUndefined();
  });

  it('falls back to Node without socat on auto, and says how to install it when socat was asked for', () => {
    expect(findSocat('auto', '/nonexistent')).toBeUndefined();
    expect(() => findSocat('socat', '/nonexistent')).toThrow(/no working socat is on PATH: install it \(apt-get install socat\)/);
  });
});
