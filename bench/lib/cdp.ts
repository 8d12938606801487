// A minimal raw Chrome DevTools Protocol client over one websocket (the `ws` package): send a
// command, await its answer. No event handling beyond what the benchmarks need.
import WebSocket from 'ws';
import { z } from 'zod';

const Answer = z.object({
  id: z.number(),
  result: z.unknown().optional(),
  error: z.object({ message: z.string() }).optional(),
});

export class CdpClient {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: WebSocket.RawData) => this.onMessage(data));
    ws.on('close', () => {
      for (const p of this.pending.values()) p.reject(new Error('CDP connection closed'));
      this.pending.clear();
    });
  }

  static connect(url: string, timeoutMs = 10_000): Promise<CdpClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024, handshakeTimeout: timeoutMs });
      ws.once('open', () => resolve(new CdpClient(ws)));
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`CDP upgrade refused: HTTP ${res.statusCode}`)));
    });
  }

  private onMessage(data: WebSocket.RawData): void {
    const parsed: unknown = JSON.parse(data.toString());
    const answer = Answer.safeParse(parsed);
    if (!answer.success) return; // an event
    const waiter = this.pending.get(answer.data.id);
    if (!waiter) return;
    this.pending.delete(answer.data.id);
    if (answer.data.error) waiter.reject(new Error(`CDP error: ${answer.data.error.message}`));
    else waiter.resolve(answer.data.result);
  }

  /** Sends one command and parses its result with `schema`. */
  async send<T>(schema: z.ZodType<T>, method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<T> {
    const id = this.nextId++;
    const result = await new Promise<unknown>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }), (err) => {
        if (err) {
          this.pending.delete(id);
          reject(err);
        }
      });
    });
    return schema.parse(result);
  }

  close(): void {
    this.ws.close();
  }
}

export const ProcessInfo = z.object({ processInfo: z.array(z.object({ type: z.string(), id: z.number() })) });
export const Version = z.object({ product: z.string(), userAgent: z.string() });
export const Targets = z.object({ targetInfos: z.array(z.object({ targetId: z.string(), type: z.string() })) });
export const Attached = z.object({ sessionId: z.string() });
export const Created = z.object({ targetId: z.string() });
export const Evaluated = z.object({
  result: z.object({ value: z.unknown().optional() }),
  exceptionDetails: z.unknown().optional(),
});

/** The pid of the browser process behind a CDP connection (SystemInfo.getProcessInfo). */
export async function browserPid(cdp: CdpClient): Promise<number> {
  const info = await cdp.send(ProcessInfo, 'SystemInfo.getProcessInfo');
  const browser = info.processInfo.find((p) => p.type === 'browser');
  if (!browser) throw new Error('SystemInfo.getProcessInfo named no browser process');
  return browser.id;
}

/** Attaches (flattened) to the first page target, creating one if there is none. */
export async function attachToPage(cdp: CdpClient, targetId?: string): Promise<{ targetId: string; sessionId: string }> {
  let id = targetId;
  if (!id) {
    const { targetInfos } = await cdp.send(Targets, 'Target.getTargets');
    id = targetInfos.find((t) => t.type === 'page')?.targetId ?? (await cdp.send(Created, 'Target.createTarget', { url: 'about:blank' })).targetId;
  }
  const { sessionId } = await cdp.send(Attached, 'Target.attachToTarget', { targetId: id, flatten: true });
  return { targetId: id, sessionId };
}
