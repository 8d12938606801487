// Moves a browser profile between object storage and a user-data dir: restore before Chromium
// starts (through a short-lived GET URL), save after it closed cleanly (through a PUT URL).
// Launchers hold no storage credentials: both URLs come from the control plane.
import fs from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import * as tar from 'tar';

export class ProfileError extends Error {
  override name = 'ProfileError';
}

/** What a profile archive leaves out: caches and the files that belong to one running browser. */
const SKIP = [
  /^Singleton(Lock|Socket|Cookie)$/,
  /^DevToolsActivePort$/,
  /^lockfile$/,
  /^Crashpad$/,
  /^(Default|Profile \d+)\/(Cache|Code Cache|GPUCache|DawnCache|DawnGraphiteCache|DawnWebGPUCache|Service Worker\/CacheStorage|Service Worker\/ScriptCache)(\/|$)/,
  /^(ShaderCache|GrShaderCache|GraphiteDawnCache|component_crx_cache|extensions_crx_cache|BrowserMetrics|Safe Browsing)(\/|$)/,
  /^(Default|Profile \d+)\/.*-journal$/,
];

export const keepInArchive = (relative: string): boolean => {
  const p = relative.replace(/^\.\//, '');
  return p === '' || p === '.' || !SKIP.some((re) => re.test(p));
};

function sizeLimit(maxBytes: number, what: string): Transform {
  let bytes = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      bytes += chunk.length;
      if (bytes > maxBytes) cb(new ProfileError(`the context archive is larger than the limit of ${maxBytes} bytes (${what})`));
      else cb(null, chunk);
    },
  });
}

export async function restoreProfile(getUrl: string, userDataDir: string, maxBytes: number): Promise<{ bytes: number }> {
  let res: Response;
  try {
    res = await fetch(getUrl, { signal: AbortSignal.timeout(120_000) });
  } catch (err) {
    throw new ProfileError(`the context archive could not be downloaded: ${(err as Error).message}`);
  }
  if (res.status === 404) throw new ProfileError('the context archive is missing from object storage');
  if (!res.ok || !res.body) throw new ProfileError(`the context archive could not be downloaded (HTTP ${res.status})`);
  const declared = Number(res.headers.get('content-length') ?? 0);
  if (declared > maxBytes) throw new ProfileError(`the context archive is ${declared} bytes, over the limit of ${maxBytes}`);
  try {
    await pipeline(
      Readable.fromWeb(res.body as WebReadableStream),
      sizeLimit(maxBytes, 'while downloading'),
      tar.x({ cwd: userDataDir, strict: true, gzip: true, filter: (p) => keepInArchive(p) }) as unknown as NodeJS.WritableStream,
    );
  } catch (err) {
    if (err instanceof ProfileError) throw err;
    throw new ProfileError(`the context archive is corrupt: ${(err as Error).message}`);
  }
  return { bytes: declared };
}

/** Packs the profile (after the browser closed cleanly) and uploads it in one PUT. */
export async function saveProfile(userDataDir: string, putUrl: string, maxBytes: number): Promise<{ bytes: number }> {
  const file = path.join(os.tmpdir(), `caravan-profile-${process.pid}-${Date.now()}.tar.gz`);
  try {
    await tar.c({ gzip: true, file, cwd: userDataDir, portable: true, filter: (p) => keepInArchive(p) }, ['.']);
    const { size } = await fs.stat(file);
    if (size > maxBytes) throw new ProfileError(`the profile packs to ${size} bytes, over the limit of ${maxBytes}; not saved`);
    const res = await fetch(putUrl, {
      method: 'PUT',
      body: Readable.toWeb(createReadStream(file)) as unknown as BodyInit,
      headers: { 'content-length': String(size), 'content-type': 'application/gzip' },
      duplex: 'half',
      signal: AbortSignal.timeout(300_000),
    } as RequestInit);
    if (!res.ok) throw new ProfileError(`object storage refused the profile upload (HTTP ${res.status})`);
    return { bytes: size };
  } finally {
    await fs.rm(file, { force: true });
  }
}
