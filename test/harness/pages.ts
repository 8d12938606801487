// A tiny local web server with pages for browsers under test to open.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Pages {
  url: string;
  close(): Promise<void>;
}

export async function servePages(): Promise<Pages> {
  const server = http.createServer((req, res) => {
    const name = new URL(req.url ?? '/', 'http://x').searchParams.get('name') ?? 'Caravan test page';
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><head><title>${name.replace(/[<>&]/g, '')}</title></head><body><h1 id="h">hello</h1><script>window.answer = 6 * 7;</script></body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
