// The route registry: connection counting, idle grace, bytes flushing and retries.
import { describe, expect, it } from 'vitest';
import { createRouteRegistry } from '../../agent/routes.ts';
import type { NodeSignal } from '../../schema/agent.ts';
import { manualTimers, signalSink, testLog, waitFor } from './helpers.ts';

const reg = (sessionId: string, keepAlive = false) => ({ sessionId, browserPort: 9222, browserWsPath: '/devtools/browser/x', keepAlive });

describe('route registry', () => {
  it('emits ATTACHED once, IDLE after the grace, and nothing when a client returns in time', async () => {
    const timers = manualTimers();
    const sink = signalSink();
    const routes = createRouteRegistry({ idleGraceMs: 100, signals: sink.signals, log: testLog(), timers });
    routes.add(reg('s1'));
    const a = routes.attach('s1');
    const b = routes.attach('s1');
    expect(routes.get('s1')?.openClients).toBe(2);
    a?.detach();
    expect(timers.pending(100)).toBe(0);
    b?.detach();
    b?.detach(); // twice is harmless
    expect(timers.pending(100)).toBe(1);
    const c = routes.attach('s1');
    expect(timers.pending(100)).toBe(0);
    c?.detach();
    timers.fire(100);
    await routes.flush();
    expect(sink.received).toEqual([{ kind: 'ATTACHED', sessionId: 's1' }, { kind: 'IDLE', sessionId: 's1' }]);
  });

  it('never starts the grace for keepAlive sessions', () => {
    const timers = manualTimers();
    const routes = createRouteRegistry({ idleGraceMs: 100, signals: async () => undefined, log: testLog(), timers });
    routes.add(reg('s1', true));
    routes.attach('s1')?.detach();
    expect(timers.pending(100)).toBe(0);
  });

  it('works with real timers', async () => {
    const sink = signalSink();
    const routes = createRouteRegistry({ idleGraceMs: 30, signals: sink.signals, log: testLog() });
    routes.add(reg('s1'));
    routes.attach('s1')?.detach();
    await waitFor(() => sink.received.some((s) => s.kind === 'IDLE'), 2_000, 'IDLE');
    await routes.stop();
  });

  it('flushes byte deltas on disconnect, every 5 s, and on removal', async () => {
    const timers = manualTimers();
    const sink = signalSink();
    const routes = createRouteRegistry({ idleGraceMs: 100, signals: sink.signals, log: testLog(), timers });
    routes.add(reg('s1', true));
    let moved = 0;
    const client = routes.attach('s1', { meter: () => moved });
    moved = 1_000;
    expect(timers.pending(5_000)).toBe(1);
    timers.fire(5_000);
    await routes.flush();
    moved = 1_500;
    client?.detach();
    await routes.flush();
    routes.addBytes('s1', 7);
    routes.remove('s1');
    await routes.flush();
    const bytes = sink.received.filter((s): s is Extract<NodeSignal, { kind: 'BYTES' }> => s.kind === 'BYTES').map((s) => s.proxyBytes);
    expect(bytes).toEqual([1_000, 500, 7]);
    expect(timers.pending(5_000)).toBe(0);
  });

  it('keeps signals when sending fails and sends them at the next flush', async () => {
    const timers = manualTimers();
    const sent: NodeSignal[][] = [];
    let fail = true;
    const routes = createRouteRegistry({
      idleGraceMs: 100, log: testLog(), timers,
      signals: async (list) => {
        if (fail) throw new Error('control plane down');
        sent.push(list);
      },
    });
    routes.add(reg('s1'));
    routes.attach('s1', { meter: () => 42 - 0 })?.detach();
    routes.addBytes('s1', 8);
    await routes.flush();
    expect(sent).toEqual([]);
    fail = false;
    timers.fire(5_000);
    await routes.flush();
    expect(sent.flat()).toEqual([
      { kind: 'ATTACHED', sessionId: 's1' },
      { kind: 'BYTES', sessionId: 's1', proxyBytes: 8 },
    ]);
  });

  it('closes attached clients when their route is removed', () => {
    const routes = createRouteRegistry({ idleGraceMs: 100, signals: async () => undefined, log: testLog(), timers: manualTimers() });
    routes.add(reg('s1'));
    let closed = 0;
    const client = routes.attach('s1', { close: () => closed++ });
    const removed: string[] = [];
    routes.onRemove((id) => removed.push(id));
    expect(routes.remove('s1')).toBe(true);
    expect(closed).toBe(1);
    expect(removed).toEqual(['s1']);
    client?.detach();
    expect(routes.remove('s1')).toBe(false);
    expect(routes.attach('s1')).toBeUndefined();
  });
});
