// The caravan CLI: `serve` runs the control plane, `agent` a node agent, `launcher` one browser;
// `project`, `apikey` and `node` talk to a running server's operator API over tRPC. Each operator command prints one JSON object.
import { Command, InvalidArgumentError } from 'commander';
import { createTRPCClient, httpLink } from '@trpc/client';
import { cliDefaults, loadConfig } from './config.ts';
import type { AppRouter } from './trpc/router.ts';

const program = new Command('caravan').description('Self-hosted browser sessions (Browserbase-compatible)');
const defaults = cliDefaults();

const int = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError(`${name} must be a positive whole number`);
  return n;
};
const collect = (v: string, prev: string[]) => [...prev, v];

function client(opts: { url: string }) {
  return createTRPCClient<AppRouter>({
    links: [httpLink({ url: `${opts.url.replace(/\/$/, '')}/trpc`, headers: () => (defaults.token ? { 'x-dashboard-token': defaults.token } : {}) })],
  });
}

async function print(fn: () => Promise<unknown>) {
  try {
    process.stdout.write(JSON.stringify(await fn()) + '\n');
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const hint = /fetch failed|ECONNREFUSED/.test(message) ? ` (is the server running at the --url given? start it with: npm start)` : '';
    process.stderr.write(`caravan: ${message}${hint}\n`);
    process.exitCode = 1;
  }
}

program
  .command('serve', { isDefault: true })
  .description('run the control plane on its configured (or embedded) defaults')
  .action(async () => {
    let config;
    try {
      config = loadConfig();
    } catch (err) {
      process.stderr.write(`caravan: ${(err as Error).message}\n`);
      process.exit(2);
    }
    // Loaded here only: operator commands should not pay for loading the whole server.
    const { createServer } = await import('./main.ts');
    const server = createServer({ config });
    let stopping = false;
    const shutdown = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      process.stderr.write(`caravan: ${signal}, shutting down\n`);
      await server.stop();
      process.exit(0);
    };
    process.on('SIGINT', () => void shutdown('SIGINT'));
    process.on('SIGTERM', () => void shutdown('SIGTERM'));
    try {
      await server.start();
    } catch (err) {
      process.stderr.write(`caravan: could not start: ${(err as Error).message}\n`);
      await server.stop();
      process.exit(1);
    }
  });

program
  .command('launcher')
  .description('run one browser launcher (started by a scheduler, configured by CARAVAN_* variables)')
  .action(async () => {
    await import('../agent/launcher/main.ts');
  });

program
  .command('agent')
  .description('run the node agent of this VM (CDP proxy, WebDriver relay, launcher control port; configured by AGENT_* and CARAVAN_* variables)')
  .action(async () => {
    await import('../agent/main.ts');
  });

program
  .command('node-token')
  .description('print a node credential (audience caravan-node) signed with SERVICE_JWT_SIGNING_KEY or the data dir\'s secret; agents sign their own when CARAVAN_NODE_TOKEN is unset')
  .requiredOption('--node <id>', 'the node id (CARAVAN_NODE_ID of the agent)')
  .action(async (o) => {
    const { nodeTokenFromConfig } = await import('./auth/nodeToken.ts');
    try {
      process.stdout.write(`${await nodeTokenFromConfig(loadConfig(), o.node)}\n`);
    } catch (err) {
      process.stderr.write(`caravan: ${(err as Error).message}\n`);
      process.exitCode = 1;
    }
  });

const node = program.command('node').description('browser nodes (standalone agents)');
node
  .command('list')
  .option('--url <url>', 'control plane URL', defaults.url)
  .action((o) => print(async () => ({ nodes: await client(o).node.list.query() })));
node
  .command('drain <id>')
  .description('take no new sessions on the node; its running sessions finish')
  .option('--url <url>', 'control plane URL', defaults.url)
  .action((id, o) => print(() => client(o).node.drain.mutate({ id })));

const project = program.command('project').description('manage projects');
project
  .command('create')
  .requiredOption('--name <name>', 'project name')
  .option('--concurrency <n>', 'sessions at once', int('--concurrency'))
  .option('--default-timeout <seconds>', 'default session timeout', int('--default-timeout'))
  .option('--url <url>', 'control plane URL', defaults.url)
  .action((o) => print(() => client(o).project.create.mutate({ name: o.name, concurrency: o.concurrency, defaultTimeout: o.defaultTimeout })));
project
  .command('list')
  .option('--url <url>', 'control plane URL', defaults.url)
  .action((o) => print(async () => ({ projects: await client(o).project.list.query() })));

const apikey = program.command('apikey').description('manage API keys');
apikey
  .command('create')
  .requiredOption('--project <id>', 'a project the key reaches (repeat for several)', collect, [])
  .option('--url <url>', 'control plane URL', defaults.url)
  .action((o) => print(() => client(o).apikey.create.mutate({ projects: o.project })));
apikey
  .command('list')
  .option('--url <url>', 'control plane URL', defaults.url)
  .action((o) => print(async () => ({ keys: await client(o).apikey.list.query() })));
apikey
  .command('revoke <id>')
  .option('--url <url>', 'control plane URL', defaults.url)
  .action((id, o) => print(() => client(o).apikey.revoke.mutate({ id })));

await program.parseAsync(process.argv);
