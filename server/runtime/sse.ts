// Server-sent events on a hijacked Fastify reply: headers at once (clients count the stream
// open as connected), comment heartbeats, and a registry so shutdown can end every stream.
import type { FastifyReply } from 'fastify';

export interface SseStream {
  send(event: string, data: unknown, id?: string): boolean;
  comment(text: string): void;
  /** Bytes queued but not yet written to the socket (slow clients). */
  backlog(): number;
  close(): void;
  readonly closed: Promise<void>;
}

export interface SseRegistry {
  open(reply: FastifyReply, opts?: { heartbeatMs?: number; headers?: Record<string, string> }): SseStream;
  count(): number;
  closeAll(): void;
}

export function sseRegistry(defaultHeartbeatMs = 15_000): SseRegistry {
  const open = new Set<SseStream>();
  return {
    open(reply, opts = {}) {
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
        ...opts.headers,
      });
      res.write('retry: 2000\n: connected\n\n');
      let done = false;
      let resolveClosed!: () => void;
      const closed = new Promise<void>((r) => (resolveClosed = r));
      const heartbeat = setInterval(() => stream.comment('heartbeat'), opts.heartbeatMs ?? defaultHeartbeatMs);
      heartbeat.unref();
      const finish = () => {
        if (done) return;
        done = true;
        clearInterval(heartbeat);
        open.delete(stream);
        resolveClosed();
      };
      res.on('close', finish);
      const stream: SseStream = {
        send(event, data, id) {
          if (done) return false;
          const body = typeof data === 'string' ? data : JSON.stringify(data);
          return res.write(`${id ? `id: ${id}\n` : ''}event: ${event}\ndata: ${body.replace(/\n/g, '\ndata: ')}\n\n`);
        },
        comment(text) {
          if (!done) res.write(`: ${text}\n\n`);
        },
        backlog: () => res.writableLength,
        close() {
          if (!done) res.end();
          finish();
        },
        closed,
      };
      open.add(stream);
      return stream;
    },
    count: () => open.size,
    closeAll() {
      for (const s of [...open]) s.close();
    },
  };
}
