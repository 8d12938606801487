// The profile-archive check that guards promotion of uploads and saves.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import * as tar from 'tar';
import { describe, expect, it } from 'vitest';
import { ArchiveError, validateArchive } from '../../server/contexts/archive.ts';
import { keepInArchive } from '../../agent/launcher/profile.ts';

async function archive(files: Record<string, string>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'caravan-archive-'));
  for (const [name, body] of Object.entries(files)) await fs.writeFile(`${dir}/${name}`, body);
  const stream = tar.c({ gzip: true, cwd: dir }, Object.keys(files));
  for await (const c of stream as AsyncIterable<Buffer>) chunks.push(c);
  await fs.rm(dir, { recursive: true });
  return Buffer.concat(chunks);
}

describe('validateArchive', () => {
  it('accepts a tar.gz with entries and reports its size', async () => {
    const body = await archive({ Cookies: 'c', 'Local State': '{}' });
    await expect(validateArchive(Readable.from([body]), 1e6)).resolves.toEqual({ bytes: body.length, entries: 2 });
  });
  it('refuses data that is not gzip', async () => {
    await expect(validateArchive(Readable.from([Buffer.from('hello world')]), 1e6)).rejects.toThrow(/not gzip/);
  });
  it('refuses a truncated archive', async () => {
    const body = await archive({ Cookies: 'x'.repeat(5000) });
    await expect(validateArchive(Readable.from([body.subarray(0, body.length / 2)]), 1e6)).rejects.toBeInstanceOf(ArchiveError);
  });
  it('refuses gzip that holds no tar entries', async () => {
    await expect(validateArchive(Readable.from([zlib.gzipSync(Buffer.alloc(1024))]), 1e6)).rejects.toThrow(/corrupt/);
  });
  it('refuses an archive over the size limit', async () => {
    const body = await archive({ big: 'y'.repeat(1000) });
    await expect(validateArchive(Readable.from([body]), 50)).rejects.toThrow(/larger than the limit of 50 bytes/);
  });
});

describe('what a saved profile leaves out', () => {
  it('keeps cookies, storage and preferences', () => {
    for (const p of ['Default/Cookies', 'Default/Local Storage/leveldb/000003.log', 'Local State', 'Default/Preferences']) expect(keepInArchive(p)).toBe(true);
  });
  it('drops caches and the files of one running browser', () => {
    for (const p of ['SingletonLock', 'DevToolsActivePort', 'Default/Cache/Cache_Data/x', 'Default/Code Cache/js/y', 'GrShaderCache/z', 'Default/GPUCache/a']) expect(keepInArchive(p)).toBe(false);
  });
});
