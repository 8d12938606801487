// The HMAC secret that signs connection tokens: SERVICE_JWT_SIGNING_KEY when set, otherwise a
// random secret generated once and kept (mode 0600) under the data dir.
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { SecretSource } from '../../schema/token.ts';

export function envSecret(value: string): SecretSource {
  const bytes = new TextEncoder().encode(value);
  return { get: async () => bytes };
}

export function fileSecret(dataDir: string): SecretSource {
  const file = path.join(dataDir, 'jwt-secret');
  return {
    async get() {
      try {
        return new TextEncoder().encode((await fs.readFile(file, 'utf8')).trim());
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
      await fs.mkdir(dataDir, { recursive: true });
      const value = crypto.randomBytes(48).toString('base64url');
      try {
        // wx: when two replicas race on a shared data dir, the first file wins.
        await fs.writeFile(file, value + '\n', { mode: 0o600, flag: 'wx' });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        return new TextEncoder().encode((await fs.readFile(file, 'utf8')).trim());
      }
      return new TextEncoder().encode(value);
    },
  };
}
