// The embedded object store: an S3-protocol server (s3rver) on loopback with its data under
// the data dir, used when no S3 endpoint or bucket is configured.
import fs from 'node:fs/promises';
import path from 'node:path';
import S3rver from 's3rver';
import type { Logger } from 'pino';

export const EMBEDDED_BUCKET = 'caravan-contexts';
export const EMBEDDED_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export async function startEmbeddedS3(dataDir: string, log: Logger): Promise<{ endpoint: string; stop(): Promise<void> }> {
  const directory = path.join(dataDir, 's3');
  await fs.mkdir(directory, { recursive: true });
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: EMBEDDED_BUCKET }] });
  const addr = await server.run();
  const endpoint = `http://127.0.0.1:${addr.port}`;
  log.info({ endpoint, directory }, 'embedded object storage is up');
  return { endpoint, stop: () => server.close() };
}
