// GraphQL for standalone node agents (node credential): registerNode, heartbeat, nodeSignal
// (a `signal` envelope carrying NodeSignals) and the nodeCommands subscription (over SSE), whose
// events are `handoff` envelopes carrying NodeCommands.
import { Repeater } from 'graphql-yoga';
import { CONTROL_PLANE_ID, Envelope } from '../../schema/envelope.ts';
import { NodeSignalBatch } from '../../schema/node.ts';
import { Forbidden, Invalid, Unauthorized } from '../errors.ts';
import { watchNodeCommands } from '../nodes/commands.ts';
import { heartbeatNode, registerNode } from '../nodes/register.ts';
import { applyNodeSignals } from '../sessions/reports.ts';
import { parseInput } from '../validate.ts';
import { builder, type Caller } from './builder.ts';

function nodeOf(caller: Caller): string {
  if (caller.kind !== 'node') throw new Unauthorized('a node credential is required (audience caravan-node)');
  return caller.nodeId;
}

builder.mutationField('registerNode', (t) =>
  t.field({
    type: 'JSON',
    description: 'A node agent announces its node; answers { status }.',
    args: { input: t.arg({ type: 'JSON', required: true }) },
    resolve: (_root, args, { deps, caller }) => registerNode(deps, nodeOf(caller), args.input),
  }),
);

builder.mutationField('heartbeat', (t) =>
  t.field({
    type: 'JSON',
    description: 'A node agent is alive; answers { status }. Unknown nodes get NotFound and register again.',
    args: { input: t.arg({ type: 'JSON', required: true }) },
    resolve: (_root, args, { deps, caller }) => heartbeatNode(deps, nodeOf(caller), args.input),
  }),
);

builder.mutationField('nodeSignal', (t) =>
  t.boolean({
    description: 'A `signal` envelope from a node agent; payload.structured = { signals: NodeSignal[] }.',
    args: { envelope: t.arg({ type: 'JSON', required: true }) },
    resolve: async (_root, args, { deps, caller }) => {
      const nodeId = nodeOf(caller);
      const envelope = parseInput(Envelope, args.envelope);
      if (envelope.kind !== 'signal') throw new Invalid('kind: a node sends `signal` envelopes');
      if (envelope.fromNodeId !== nodeId) throw new Forbidden(`fromNodeId: this credential is for node ${nodeId}`);
      if (envelope.toNodeId !== CONTROL_PLANE_ID) throw new Invalid(`toNodeId: must be ${CONTROL_PLANE_ID}`);
      const batch = parseInput(NodeSignalBatch, envelope.payload.structured);
      await applyNodeSignals(deps, nodeId, batch.signals);
      return true;
    },
  }),
);

builder.subscriptionType({});

builder.subscriptionField('nodeCommands', (t) =>
  t.field({
    type: 'JSON',
    description: 'Commands for the calling node agent, as `handoff` envelopes (release, drain).',
    subscribe: (_root, _args, { deps, caller }) => {
      const nodeId = nodeOf(caller);
      return new Repeater<Envelope>(async (push, stop) => {
        const unwatch = watchNodeCommands(deps, nodeId, (e) => void push(e));
        await stop;
        unwatch();
      });
    },
    resolve: (envelope: Envelope) => envelope,
  }),
);
