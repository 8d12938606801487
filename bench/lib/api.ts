// REST API throughput: GET /v1/sessions/{id} for 10 s from a second process (apiLoad.ts) with
// a few concurrent keep-alive connections; requests per second and p50/p99 latency.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { z } from 'zod';
import { progress } from './log.ts';
import { createSession, releaseSession, ROOT, type BenchServer } from './server.ts';
import { round } from './stats.ts';

const LoadOutput = z.object({
  requests: z.number(),
  errors: z.number(),
  seconds: z.number(),
  connections: z.number(),
  p50: z.number(),
  p99: z.number(),
  statuses: z.record(z.string(), z.number()),
});

export interface ApiResult {
  endpoint: string;
  connections: number;
  seconds: number;
  requests: number;
  errors: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  statuses: Record<string, number>;
}

export async function runApi(server: BenchServer, opts: { seconds?: number; connections?: number } = {}): Promise<ApiResult> {
  const seconds = opts.seconds ?? 10;
  const connections = opts.connections ?? 8;
  const s = await createSession(server, true);
  try {
    progress(`api: GET /v1/sessions/{id} for ${seconds} s with ${connections} connections from a child process`);
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/lib/apiLoad.ts')], {
        cwd: ROOT,
        timeout: (seconds + 60) * 1000,
        env: {
          PATH: process.env.PATH ?? '',
          BENCH_URL: `${server.url}/v1/sessions/${encodeURIComponent(s.id)}`,
          BENCH_KEY: server.apiKey,
          BENCH_SECONDS: String(seconds),
          BENCH_CONNECTIONS: String(connections),
        },
      }, (err, out, errOut) => (err ? reject(new Error(`API load process failed: ${errOut.trim() || err.message}`)) : resolve(out)));
    });
    const r = LoadOutput.parse(JSON.parse(stdout.trim()));
    const result: ApiResult = {
      endpoint: 'GET /v1/sessions/{id}',
      connections: r.connections,
      seconds: round(r.seconds, 2),
      requests: r.requests,
      errors: r.errors,
      rps: round(r.requests / r.seconds),
      p50Ms: round(r.p50, 2),
      p99Ms: round(r.p99, 2),
      statuses: r.statuses,
    };
    progress(`api: ${result.rps} req/s, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, ${result.errors} errors`);
    return result;
  } finally {
    await releaseSession(server, s.id).catch(() => undefined);
  }
}
