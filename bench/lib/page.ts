// The page the lifecycle benchmark navigates to: a small HTML document served by the bench
// itself on 127.0.0.1, so navigation time does not depend on the network.
import http from 'node:http';

const HTML = `<!doctype html><html><head><meta charset="utf-8"><title>caravan bench</title>
<style>body{font:16px sans-serif;margin:2em}</style></head>
<body><h1>Caravan bench</h1><p>${'A short paragraph of text. '.repeat(40)}</p>
<ul>${Array.from({ length: 50 }, (_, i) => `<li>item ${i}</li>`).join('')}</ul></body></html>`;

export async function servePage(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.url === '/favicon.ico') {
      res.writeHead(204).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': Buffer.byteLength(HTML), 'Cache-Control': 'no-store' });
    res.end(HTML);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
