// Prisma CLI configuration: the WASM schema engine and the pg driver adapter, so that no
// native engine binary is ever downloaded (see ../shared/design/TOOLCHAIN.md).
import { defineConfig } from 'prisma/config';
import { PrismaPg } from '@prisma/adapter-pg';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  engine: 'js',
  experimental: { adapter: true },
  async adapter() {
    const url = new URL(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres');
    return new PrismaPg({
      host: url.hostname,
      port: Number(url.port || 5432),
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      database: url.pathname.slice(1),
    });
  },
});
