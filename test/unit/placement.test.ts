// Placement over an in-memory snapshot: capacity, spreading, draining and down nodes.
import { describe, expect, it } from 'vitest';
import { place, type NodeSnapshot } from '../../server/scheduler/placement.ts';

const node = (id: string, over: Partial<NodeSnapshot> = {}): NodeSnapshot => ({ id, status: 'UP', capacity: 4, running: 0, ...over });

/** Places `n` sessions one after the other, as consecutive creates would. */
function placeMany(nodes: NodeSnapshot[], n: number): string[] {
  const state = nodes.map((x) => ({ ...x }));
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = place(state);
    if (!r.ok) break;
    out.push(r.nodeId);
    state.find((x) => x.id === r.nodeId)!.running++;
  }
  return out;
}

describe('place', () => {
  it('picks the least loaded node', () => {
    expect(place([node('a', { running: 3 }), node('b', { running: 1 }), node('c', { running: 2 })])).toEqual({ ok: true, nodeId: 'b' });
  });

  it('breaks ties by id', () => {
    expect(place([node('b'), node('a'), node('c')])).toEqual({ ok: true, nodeId: 'a' });
  });

  it('spreads consecutive sessions across nodes', () => {
    expect(placeMany([node('a'), node('b')], 4)).toEqual(['a', 'b', 'a', 'b']);
  });

  it('weighs load by capacity', () => {
    // 2 of 8 (25 %) is less loaded than 1 of 2 (50 %).
    expect(place([node('small', { capacity: 2, running: 1 }), node('big', { capacity: 8, running: 2 })])).toEqual({ ok: true, nodeId: 'big' });
    expect(placeMany([node('small', { capacity: 1 }), node('big', { capacity: 3 })], 4).sort()).toEqual(['big', 'big', 'big', 'small']);
  });

  it('never places past capacity', () => {
    const placed = placeMany([node('a', { capacity: 2 }), node('b', { capacity: 1 })], 10);
    expect(placed).toHaveLength(3);
    const r = place([node('a', { capacity: 2, running: 2 }), node('b', { capacity: 1, running: 1 })]);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(/every browser node is at capacity \(3 of 3 browsers on 2 nodes\)/);
  });

  it('skips draining and down nodes', () => {
    expect(place([node('a', { status: 'DRAINING' }), node('b', { status: 'DOWN' }), node('c', { running: 3 })])).toEqual({ ok: true, nodeId: 'c' });
  });

  it('says why nothing fits', () => {
    expect(place([])).toEqual({ ok: false, reason: expect.stringMatching(/no browser node is registered/) });
    expect(place([node('a', { status: 'DRAINING' }), node('b', { status: 'DOWN' }), node('c', { status: 'DOWN' })]))
      .toEqual({ ok: false, reason: 'no browser node takes new sessions (1 draining, 2 down)' });
  });

  it('does not depend on the order of the snapshot', () => {
    const nodes = [node('c', { running: 1 }), node('a', { running: 1 }), node('b', { running: 2 })];
    expect(place(nodes)).toEqual(place([...nodes].reverse()));
  });
});
