// The ObjectStore driver: S3 protocol through the AWS SDK, for AWS S3 and any S3-compatible
// server, the embedded one included (server/storage/embedded.ts).
import {
  CopyObjectCommand, CreateBucketCommand, DeleteObjectCommand, HeadBucketCommand, HeadObjectCommand,
  GetObjectCommand, PutObjectCommand, S3Client, type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';

export interface ObjectInfo {
  size: number;
  updatedAt: Date;
}

export interface ObjectStore {
  /** A URL that takes one plain HTTP PUT of the object, valid `seconds`. */
  presignPut(key: string, seconds: number): Promise<string>;
  presignGet(key: string, seconds: number): Promise<string>;
  head(key: string): Promise<ObjectInfo | null>;
  copy(from: string, to: string): Promise<void>;
  delete(key: string): Promise<void>;
  put(key: string, body: Uint8Array): Promise<void>;
}

export interface S3Options {
  endpoint?: string;
  region: string;
  bucket: string;
  forcePathStyle: boolean;
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

const notFound = (err: unknown) => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NotFound' || e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404;
};

export async function s3Store(opts: S3Options, ensureBucket = false): Promise<ObjectStore> {
  const config: S3ClientConfig = {
    region: opts.region,
    forcePathStyle: opts.forcePathStyle,
    // Non-AWS servers store the SDK's chunk framing inside objects unless checksums are
    // only computed when required (TOOLCHAIN.md).
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
    ...(opts.credentials ? { credentials: opts.credentials } : {}),
  };
  const s3 = new S3Client(config);
  const Bucket = opts.bucket;
  if (ensureBucket) {
    try {
      await s3.send(new HeadBucketCommand({ Bucket }));
    } catch (err) {
      if (!notFound(err)) throw err;
      await s3.send(new CreateBucketCommand({ Bucket }));
    }
  }
  return {
    presignPut: (key, seconds) => getSignedUrl(s3, new PutObjectCommand({ Bucket, Key: key }), { expiresIn: seconds }),
    presignGet: (key, seconds) => getSignedUrl(s3, new GetObjectCommand({ Bucket, Key: key }), { expiresIn: seconds }),
    async head(key) {
      try {
        const r = await s3.send(new HeadObjectCommand({ Bucket, Key: key }));
        return { size: r.ContentLength ?? 0, updatedAt: r.LastModified ?? new Date(0) };
      } catch (err) {
        if (notFound(err)) return null;
        throw err;
      }
    },
    async copy(from, to) {
      await s3.send(new CopyObjectCommand({ Bucket, Key: to, CopySource: `${Bucket}/${encodeURIComponent(from).replace(/%2F/g, '/')}` }));
    },
    async delete(key) {
      await s3.send(new DeleteObjectCommand({ Bucket, Key: key }));
    },
    async put(key, body) {
      await s3.send(new PutObjectCommand({ Bucket, Key: key, Body: body }));
    },
  };
}
