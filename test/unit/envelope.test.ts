// The message envelope (companion spec): both kinds, every field's type, and any key outside
// the schema refused at every level.
import { describe, expect, it } from 'vitest';
import { Envelope, EnvelopeArtifact, EnvelopePayload, EnvelopeStatus } from '../../schema/envelope.ts';
import { commandEnvelope, NodeCommand, NodeSignalBatch, signalEnvelope } from '../../schema/node.ts';

const full = () => ({
  kind: 'handoff' as const,
  fromNodeId: 'control-plane',
  toNodeId: 'node-a',
  payload: {
    message: 'release sess_1',
    structured: { command: 'release', sessionId: 'sess_1', nested: { any: ['thing', 1, null] } },
    artifacts: [{ type: 'screenshot', ref: 's3://bucket/key.png' }],
    status: { ok: false, reason: 'browser gone' },
  },
});

const ok = (v: unknown) => Envelope.safeParse(v).success;
const issues = (v: unknown) => {
  const r = Envelope.safeParse(v);
  return r.success ? [] : r.error.issues;
};

describe('envelope: what is accepted', () => {
  it('accepts both kinds with every field', () => {
    expect(ok(full())).toBe(true);
    expect(ok({ ...full(), kind: 'signal' })).toBe(true);
  });

  it('accepts an empty payload (every payload field is optional)', () => {
    expect(ok({ kind: 'signal', fromNodeId: 'a', toNodeId: 'b', payload: {} })).toBe(true);
  });

  it('accepts each payload field alone', () => {
    const base = { kind: 'signal', fromNodeId: 'a', toNodeId: 'b' };
    for (const payload of [{ message: '' }, { structured: {} }, { artifacts: [] }, { status: { ok: true } }]) {
      expect(ok({ ...base, payload }), JSON.stringify(payload)).toBe(true);
    }
  });

  it('keeps structured as given, with any keys', () => {
    const parsed = Envelope.parse(full());
    expect(parsed.payload.structured).toEqual(full().payload.structured);
  });

  it('accepts status without reason', () => {
    expect(EnvelopeStatus.safeParse({ ok: true }).success).toBe(true);
  });
});

describe('envelope: field types', () => {
  const base = full();
  it.each([
    ['kind not in handoff|signal', { ...base, kind: 'command' }, ['kind']],
    ['kind not a string', { ...base, kind: 1 }, ['kind']],
    ['fromNodeId not a string', { ...base, fromNodeId: 7 }, ['fromNodeId']],
    ['fromNodeId empty', { ...base, fromNodeId: '' }, ['fromNodeId']],
    ['toNodeId not a string', { ...base, toNodeId: null }, ['toNodeId']],
    ['toNodeId empty', { ...base, toNodeId: '' }, ['toNodeId']],
    ['payload not an object', { ...base, payload: 'hi' }, ['payload']],
    ['payload an array', { ...base, payload: [] }, ['payload']],
    ['message not a string', { ...base, payload: { message: 5 } }, ['payload', 'message']],
    ['structured a string', { ...base, payload: { structured: 'x' } }, ['payload', 'structured']],
    ['structured an array', { ...base, payload: { structured: [1] } }, ['payload', 'structured']],
    ['structured null', { ...base, payload: { structured: null } }, ['payload', 'structured']],
    ['artifacts not an array', { ...base, payload: { artifacts: { type: 'a', ref: 'b' } } }, ['payload', 'artifacts']],
    ['artifact not an object', { ...base, payload: { artifacts: ['a'] } }, ['payload', 'artifacts', 0]],
    ['artifact without type', { ...base, payload: { artifacts: [{ ref: 'b' }] } }, ['payload', 'artifacts', 0, 'type']],
    ['artifact without ref', { ...base, payload: { artifacts: [{ type: 'a' }] } }, ['payload', 'artifacts', 0, 'ref']],
    ['artifact type not a string', { ...base, payload: { artifacts: [{ type: 1, ref: 'b' }] } }, ['payload', 'artifacts', 0, 'type']],
    ['artifact ref not a string', { ...base, payload: { artifacts: [{ type: 'a', ref: false }] } }, ['payload', 'artifacts', 0, 'ref']],
    ['status not an object', { ...base, payload: { status: true } }, ['payload', 'status']],
    ['status without ok', { ...base, payload: { status: { reason: 'x' } } }, ['payload', 'status', 'ok']],
    ['status ok not a boolean', { ...base, payload: { status: { ok: 'yes' } } }, ['payload', 'status', 'ok']],
    ['status reason not a string', { ...base, payload: { status: { ok: true, reason: 3 } } }, ['payload', 'status', 'reason']],
  ])('refuses %s', (_what, value, where) => {
    const found = issues(value);
    expect(found.length).toBeGreaterThan(0);
    expect(found.map((i) => i.path)).toContainEqual(where);
  });

  it.each(['kind', 'fromNodeId', 'toNodeId', 'payload'])('refuses an envelope without %s', (key) => {
    const v: Record<string, unknown> = full();
    delete v[key];
    expect(issues(v).map((i) => i.path)).toContainEqual([key]);
  });

  it('refuses what is not an object at all', () => {
    for (const v of [null, undefined, 'envelope', 1, []]) expect(ok(v)).toBe(false);
  });
});

describe('envelope: no key outside the schema, at any level', () => {
  const unknownKey = (v: unknown, where: (string | number)[], key: string) => {
    const found = issues(v).find((i) => i.code === 'unrecognized_keys');
    expect(found, `expected ${key} refused at ${where.join('.') || '(root)'}`).toBeDefined();
    expect(found!.path).toEqual(where);
    expect((found as { keys: string[] }).keys).toEqual([key]);
  };

  it('at the top level', () => unknownKey({ ...full(), id: 'x' }, [], 'id'));
  it('in the payload', () => unknownKey({ ...full(), payload: { ...full().payload, extra: 1 } }, ['payload'], 'extra'));
  it('in an artifact', () => unknownKey({ ...full(), payload: { artifacts: [{ type: 'a', ref: 'b', size: 1 }] } }, ['payload', 'artifacts', 0], 'size'));
  it('in the status', () => unknownKey({ ...full(), payload: { status: { ok: true, code: 500 } } }, ['payload', 'status'], 'code'));
  it('for both kinds', () => {
    unknownKey({ ...full(), kind: 'signal', toNodeID: 'typo' }, [], 'toNodeID');
    unknownKey({ ...full(), kind: 'handoff', payload: { Message: 'typo' } }, ['payload'], 'Message');
  });
  it('even with an undefined value: the key itself is refused', () => {
    expect(EnvelopePayload.safeParse({ message: 'x', extra: undefined }).success).toBe(false);
    expect(EnvelopeArtifact.safeParse({ type: 'a', ref: 'b', more: undefined }).success).toBe(false);
  });
  it('but any keys inside structured', () => {
    expect(ok({ ...full(), payload: { structured: { whatever: { deeply: { nested: true } }, 'with space': 1 } } })).toBe(true);
  });
});

describe('the envelopes agents and the control plane exchange', () => {
  it('commands are handoff envelopes from the control plane, with a NodeCommand in structured', () => {
    const e = commandEnvelope('node-a', { command: 'release', sessionId: 'sess_1' }, 'session ended');
    expect(e).toEqual({ kind: 'handoff', fromNodeId: 'control-plane', toNodeId: 'node-a', payload: { message: 'session ended', structured: { command: 'release', sessionId: 'sess_1' } } });
    expect(NodeCommand.parse(e.payload.structured)).toEqual({ command: 'release', sessionId: 'sess_1' });
    expect(NodeCommand.safeParse({ command: 'drain', extra: 1 }).success).toBe(false);
    expect(NodeCommand.safeParse({ command: 'reboot' }).success).toBe(false);
  });

  it('signals are signal envelopes to the control plane, with a NodeSignalBatch in structured', () => {
    const e = signalEnvelope('node-a', [{ kind: 'ATTACHED', sessionId: 'sess_1' }, { kind: 'BYTES', sessionId: 'sess_1', proxyBytes: 10 }]);
    expect(e.kind).toBe('signal');
    expect(e.toNodeId).toBe('control-plane');
    expect(NodeSignalBatch.parse(e.payload.structured).signals).toHaveLength(2);
    expect(NodeSignalBatch.safeParse({ signals: [], more: true }).success).toBe(false);
  });
});
