// Operator GraphQL for browser nodes: capacity, running sessions and health, and a live stream
// of the node list. Node rows change on registration, heartbeat, drain and the reaper (any
// replica), so the stream re-reads them on every session change and every few seconds, and
// sends the list whenever it differs from the last one sent.
import { Repeater } from 'graphql-yoga';
import { builder } from '../builder.ts';
import { operatorOf } from './auth.ts';
import { readNodes, type NodeItem } from './nodeReads.ts';
import { NodeRef } from './types.ts';

export const NODE_POLL_MS = 2_000;

builder.queryField('nodes', (t) =>
  t.field({
    type: [NodeRef],
    resolve: (_r, _a, ctx) => {
      operatorOf(ctx);
      return readNodes(ctx.deps);
    },
  }),
);

/** What makes two node lists differ for a viewer (not the row's internal timestamps). */
const fingerprint = (list: NodeItem[]) => JSON.stringify(list.map((n) => [n.id, n.status, n.healthy, n.capacity, n.running, n.publicHost, n.lastHeartbeatAt]));

builder.subscriptionField('nodesChanged', (t) =>
  t.field({
    type: [NodeRef],
    description: 'The node list now, then again whenever a node or its running count changes.',
    subscribe: (_r, _a, ctx) => {
      operatorOf(ctx);
      const { deps } = ctx;
      return new Repeater<NodeItem[]>(async (push, stop) => {
        let last = '';
        let pending: NodeJS.Timeout | undefined;
        let stopped = false;
        const check = async () => {
          const list = await readNodes(deps);
          const fp = fingerprint(list);
          if (!stopped && fp !== last) {
            last = fp;
            await push(list);
          }
        };
        const soon = () => {
          if (pending) return;
          pending = setTimeout(() => {
            pending = undefined;
            void check().catch((err) => deps.log.warn({ err }, 'node stream read failed'));
          }, 100);
        };
        const unsubscribe = deps.bus.subscribe(soon);
        const timer = setInterval(soon, NODE_POLL_MS);
        await check().catch((err) => deps.log.warn({ err }, 'node stream read failed'));
        await stop;
        stopped = true;
        unsubscribe();
        clearInterval(timer);
        if (pending) clearTimeout(pending);
      });
    },
    resolve: (list: NodeItem[]) => list,
  }),
);
