// Creates the Prisma client on the pg driver adapter (no native query engine).
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/client.ts';

export type Db = PrismaClient;
export { Prisma } from './generated/client.ts';
export type { Session as SessionRow, Project as ProjectRow } from './generated/client.ts';

export function createDb(connectionString: string, max = 10): Db {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString, max }) });
}
