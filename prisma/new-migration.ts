// Writes the next migration: the SQL that takes the schema of the last committed migration's
// snapshot to prisma/schema.prisma. Usage: npm run migration:new -- <name>
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const name = process.argv[2];
if (!name || !/^[a-z0-9_]+$/.test(name)) throw new Error('usage: npm run migration:new -- <snake_case_name>');
const dir = 'prisma/migrations';
const existing = fs.readdirSync(dir).filter((d) => /^\d{4}_/.test(d)).sort();
const last = existing.at(-1);
const next = String(existing.length + 1).padStart(4, '0') + '_' + name;
const from = last ? ['--from-schema-datamodel', path.join(dir, last, 'schema.prisma')] : ['--from-empty'];
const sql = execFileSync('npx', ['prisma', 'migrate', 'diff', ...from, '--to-schema-datamodel', 'prisma/schema.prisma', '--script'], {
  env: { ...process.env, DATABASE_URL: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres' },
  encoding: 'utf8',
});
fs.mkdirSync(path.join(dir, next));
fs.writeFileSync(path.join(dir, next, 'migration.sql'), sql);
// The schema snapshot lets the next diff start from exactly what this migration produced.
fs.copyFileSync('prisma/schema.prisma', path.join(dir, next, 'schema.prisma'));
console.log(`wrote ${dir}/${next}/migration.sql`);
