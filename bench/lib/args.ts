// Command-line options of `npm run bench -- [--chrome PATH] [--iterations N] [--only a,b] [--profiles auto|disk|PATH]`.
import path from 'node:path';
import { parseArgs } from 'node:util';

export const SECTIONS = ['lifecycle', 'proxy', 'density', 'api'] as const;
export type Section = (typeof SECTIONS)[number];

export interface BenchOptions {
  /** CHROME_PATH for the servers and the direct comparison; undefined = the server's default. */
  chrome: string | undefined;
  /** Lifecycle iterations per mode (cold, warm). */
  iterations: number;
  only: ReadonlySet<Section>;
  /** BROWSER_PROFILE_DIR of the servers: auto (memory when /dev/shm allows), disk, or a path. */
  profiles: string;
}

export const USAGE = `usage: npm run bench -- [--chrome PATH] [--iterations N] [--only ${SECTIONS.join(',')}] [--profiles auto|disk|PATH]`;

export function parseOptions(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      chrome: { type: 'string' },
      iterations: { type: 'string', default: '30' },
      only: { type: 'string' },
      profiles: { type: 'string', default: 'auto' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const iterations = Number(values.iterations);
  if (!Number.isInteger(iterations) || iterations < 1) throw new Error(`--iterations must be a positive whole number, got "${values.iterations}"`);
  const only = new Set<Section>();
  for (const name of (values.only ?? SECTIONS.join(',')).split(',').map((s) => s.trim()).filter(Boolean)) {
    const section = SECTIONS.find((s) => s === name);
    if (!section) throw new Error(`--only: unknown section "${name}" (one of ${SECTIONS.join(', ')})`);
    only.add(section);
  }
  const profiles = values.profiles;
  if (profiles !== 'auto' && profiles !== 'disk' && !path.isAbsolute(profiles)) throw new Error(`--profiles must be auto, disk or an absolute path, got "${profiles}"`);
  return { chrome: values.chrome, iterations, only, profiles };
}
