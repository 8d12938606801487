// A small server-sent-events client for tests: collects events and comments, and waits for the
// one a test needs (no sleeps).
export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

export interface SseClient {
  status: number;
  headers: Headers;
  events: SseEvent[];
  comments: string[];
  /** Resolves with the first event (already received or still to come) matching `pred`. */
  waitFor(pred: (e: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  /** Resolves once a comment matching `pred` arrived. */
  waitForComment(pred: (c: string) => boolean, timeoutMs?: number): Promise<string>;
  close(): void;
}

export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const waiters = new Set<() => void>();
  const wake = () => { for (const w of [...waiters]) w(); };
  if (res.body && (res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    void (async () => {
      const decoder = new TextDecoder();
      let buf = '';
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buf += decoder.decode(chunk, { stream: true });
          let i: number;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            const e: SseEvent = { event: 'message', data: '' };
            const data: string[] = [];
            let isEvent = false;
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) comments.push(line.slice(1).trim());
              else if (line.startsWith('id: ')) { e.id = line.slice(4); isEvent = true; }
              else if (line.startsWith('event: ')) { e.event = line.slice(7); isEvent = true; }
              else if (line.startsWith('data: ')) { data.push(line.slice(6)); isEvent = true; }
            }
            if (isEvent && data.length) events.push({ ...e, data: data.join('\n') });
          }
          wake();
        }
      } catch {
        // aborted
      }
    })();
  }
  function wait<T>(find: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = find();
        if (found === undefined) return;
        cleanup();
        resolve(found);
      };
      const timer = setTimeout(() => { cleanup(); reject(new Error(`timed out waiting for ${what}; got ${JSON.stringify(events.map((e) => e.event))}`)); }, timeoutMs);
      const cleanup = () => { clearTimeout(timer); waiters.delete(check); };
      waiters.add(check);
      check();
    });
  }
  return {
    status: res.status,
    headers: res.headers,
    events,
    comments,
    waitFor: (pred, timeoutMs = 10_000) => wait(() => events.find(pred), timeoutMs, 'an event'),
    waitForComment: (pred, timeoutMs = 10_000) => wait(() => comments.find(pred), timeoutMs, 'a comment'),
    close: () => abort.abort(),
  };
}
