// When the control plane itself is killed, its launchers notice and take their browsers down.
import { afterAll, expect, it } from 'vitest';
import { startChildServer, type ChildServer } from '../harness/child.ts';
import { processesMentioning } from '../harness/processes.ts';
import { waitFor } from '../harness/waitFor.ts';

let server: ChildServer | undefined;
afterAll(() => server?.stop());

it('kill -9 of the control plane leaves no Chromium (session or pooled) within 10 s', async () => {
  server = await startChildServer();
  const res = await fetch(`${server.url}/v1/sessions`, {
    method: 'POST',
    headers: { 'x-svc-api-key': server.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ keepAlive: true }),
  });
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as { id: string };
  expect(id).toMatch(/^sess_/);
  // Every browser of this server, the session's and the warm pool's, keeps its profile there.
  const browsers = () => processesMentioning(`--user-data-dir=${server!.profilesDir}`);
  await waitFor(() => browsers().length > 0, { what: 'browsers to run' });
  server.child.proc.kill('SIGKILL');
  const t0 = Date.now();
  await waitFor(() => browsers().length === 0, { timeoutMs: 10_000, what: 'every browser process of the session to exit' });
  expect(Date.now() - t0).toBeLessThan(10_000);
});
