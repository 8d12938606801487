// Load generator run as its own process by api.ts: N concurrent keep-alive GETs of one URL in a
// loop for a fixed time; prints one JSON line with the count, errors and latency percentiles.
import { percentile } from './stats.ts';

const url = process.env.BENCH_URL ?? '';
const key = process.env.BENCH_KEY ?? '';
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 1);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 8);
if (!url) throw new Error('BENCH_URL is required');

const headers = { 'x-svc-api-key': key };

async function loop(until: number, latencies: number[] | undefined, statuses: Map<number, number>): Promise<number> {
  let errors = 0;
  while (performance.now() < until) {
    const t = performance.now();
    try {
      const res = await fetch(url, { headers });
      await res.arrayBuffer();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (!res.ok) errors++;
    } catch {
      errors++;
    }
    latencies?.push(performance.now() - t);
  }
  return errors;
}

const ignored = new Map<number, number>();
await Promise.all(Array.from({ length: connections }, () => loop(performance.now() + warmupSeconds * 1000, undefined, ignored)));

const latencies: number[] = [];
const statuses = new Map<number, number>();
const t0 = performance.now();
const errors = (await Promise.all(Array.from({ length: connections }, () => loop(t0 + seconds * 1000, latencies, statuses)))).reduce((a, b) => a + b, 0);
const elapsed = (performance.now() - t0) / 1000;

process.stdout.write(JSON.stringify({
  requests: latencies.length,
  errors,
  seconds: elapsed,
  connections,
  p50: percentile(latencies, 50),
  p99: percentile(latencies, 99),
  statuses: Object.fromEntries(statuses),
}) + '\n');
