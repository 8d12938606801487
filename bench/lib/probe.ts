// The first session on a fresh server: warms it up (untimed), reads the browser version; and
// the wait for a warm pool to fill before timed work starts.
import { browserPid, CdpClient, Version } from './cdp.ts';
import { progress } from './log.ts';
import { isGone } from './procfs.ts';
import { createSession, releaseSession, serverBrowsers, until, type BenchServer } from './server.ts';

/** Polls until the process is gone; returns whether it went within the limit. */
export const waitGone = (pid: number, timeoutMs = 30_000) => until(() => isGone(pid), timeoutMs, 10);

/** One untimed session: create, connect over the proxy, Browser.getVersion, release. */
export async function probe(server: BenchServer): Promise<{ product: string; userAgent: string }> {
  const s = await createSession(server);
  const cdp = await CdpClient.connect(s.connectUrl);
  try {
    const version = await cdp.send(Version, 'Browser.getVersion');
    const pid = await browserPid(cdp);
    await releaseSession(server, s.id);
    await waitGone(pid);
    return version;
  } finally {
    cdp.close();
  }
}

/** With no session running, every browser under the data dir is a pooled one. */
export async function waitForPool(server: BenchServer, size: number, timeoutMs: number): Promise<number> {
  if (size <= 0) return 0;
  let seen = 0;
  await until(() => (seen = serverBrowsers(server).length) >= size, timeoutMs, 100);
  progress(`${server.label}: ${seen}/${size} pooled browsers running before the first timed create`);
  return seen;
}
