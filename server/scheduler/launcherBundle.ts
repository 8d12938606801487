// Bundles the launcher (agent/launcher/main.ts) into one ES module with esbuild, once per
// control-plane start, so that each launcher starts on plain Node in tens of milliseconds
// instead of compiling TypeScript through tsx at every session start.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export function bundleLauncher(): { entry: string; nodeArgs: string[] } {
  // Inside the project's node_modules, so the bundle's external imports resolve as usual.
  const outfile = path.join(ROOT, 'node_modules/.cache/caravan/launcher.mjs');
  buildSync({
    entryPoints: [path.join(ROOT, 'agent/launcher/main.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'error',
  });
  return { entry: outfile, nodeArgs: [] };
}

/** Runs the TypeScript source directly (slower start; for when bundling is not wanted). */
export function sourceLauncher(): { entry: string; nodeArgs: string[] } {
  return { entry: path.join(ROOT, 'agent/launcher/main.ts'), nodeArgs: ['--import', 'tsx'] };
}
