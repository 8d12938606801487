// Bundles the launcher (agent/launcher/main.ts) into one ES module with esbuild, once per
// control-plane start, so that each launcher starts on plain Node in tens of milliseconds
// instead of compiling TypeScript through tsx at every session start. Its dependencies go in
// the bundle too: resolving and loading zod, pino, ws and tar file by file cost ~80 ms of
// every launcher's start here.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export function bundleLauncher(): { entry: string; nodeArgs: string[] } {
  const outfile = path.join(ROOT, 'node_modules/.cache/caravan/launcher.mjs');
  const built = buildSync({
    write: false,
    entryPoints: [path.join(ROOT, 'agent/launcher/main.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'error',
    // CommonJS dependencies inside an ES module bundle still call require() for Node built-ins.
    banner: { js: "import { createRequire as __caravanCreateRequire } from 'node:module'; const require = __caravanCreateRequire(import.meta.url);" },
  });
  const code = built.outputFiles[0];
  if (!code) throw new Error('esbuild produced no launcher bundle');
  // Several control planes (tests, replicas) may share this checkout: write, then rename, so
  // that a launcher starting meanwhile never loads half a file.
  fs.mkdirSync(path.dirname(outfile), { recursive: true });
  const tmp = `${outfile}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, code.contents);
  fs.renameSync(tmp, outfile);
  return { entry: outfile, nodeArgs: [] };
}

/** Runs the TypeScript source directly (slower start; for when bundling is not wanted). */
export function sourceLauncher(): { entry: string; nodeArgs: string[] } {
  return { entry: path.join(ROOT, 'agent/launcher/main.ts'), nodeArgs: ['--import', 'tsx'] };
}
