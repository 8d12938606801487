// Checks that a stream is a readable tar.gz profile archive within the size limit, without
// unpacking it anywhere.
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar';

export class ArchiveError extends Error {}

export async function validateArchive(body: Readable, maxBytes: number): Promise<{ bytes: number; entries: number }> {
  let bytes = 0;
  let entries = 0;
  const limit = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      bytes += chunk.length;
      if (bytes > maxBytes) cb(new ArchiveError(`the archive is larger than the limit of ${maxBytes} bytes`));
      else cb(null, chunk);
    },
  });
  const parser = tar.t({ strict: true, onReadEntry: () => void entries++ });
  // A gzip header is required: a profile archive is always compressed.
  let sawGzip: boolean | undefined;
  const magic = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      if (sawGzip === undefined) sawGzip = chunk[0] === 0x1f && chunk[1] === 0x8b;
      if (!sawGzip) cb(new ArchiveError('the archive is not gzip-compressed (expected a .tar.gz)'));
      else cb(null, chunk);
    },
  });
  try {
    await pipeline(body, limit, magic, parser as unknown as NodeJS.WritableStream);
  } catch (err) {
    if (err instanceof ArchiveError) throw err;
    throw new ArchiveError(`the archive is corrupt: ${(err as Error).message}`);
  }
  if (entries === 0) throw new ArchiveError('the archive is empty or corrupt (no entries)');
  return { bytes, entries };
}
