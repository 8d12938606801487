// GraphQL mutations launchers and node agents report through. A launcher's credential is
// scoped to its one session; a node's to sessions placed on it.
import { NodeSignal, SessionReport } from '../../schema/agent.ts';
import { Forbidden, Unauthorized } from '../errors.ts';
import { applyNodeSignals, applySessionReport } from '../sessions/reports.ts';
import { parseInput } from '../validate.ts';
import { builder } from './builder.ts';
import { contextSaved } from '../contexts/attach.ts';
import { z } from 'zod';

builder.queryField('health', (t) => t.string({ resolve: () => 'ok' }));

builder.mutationField('reportSession', (t) =>
  t.boolean({
    args: { input: t.arg({ type: 'JSON', required: true }) },
    resolve: async (_root, args, { deps, caller }) => {
      const report = parseInput(SessionReport, args.input);
      if (caller.kind === 'anonymous') throw new Unauthorized('a launcher or node credential is required');
      if (caller.kind === 'launcher' && caller.sessionId !== report.sessionId) throw new Forbidden('this credential may only report for its own session');
      if (caller.kind === 'node') {
        const row = await deps.db.session.findUnique({ where: { id: report.sessionId }, select: { nodeId: true } });
        if (!row || row.nodeId !== caller.nodeId) throw new Forbidden('this node may only report for sessions placed on it');
      }
      return applySessionReport(deps, report);
    },
  }),
);

builder.mutationField('reportNodeSignals', (t) =>
  t.boolean({
    args: { signals: t.arg({ type: 'JSON', required: true }) },
    resolve: async (_root, args, { deps, caller }) => {
      if (caller.kind !== 'node') throw new Unauthorized('a node credential is required');
      const signals = parseInput(z.array(NodeSignal).max(1000), args.signals);
      await applyNodeSignals(deps, caller.nodeId, signals);
      return true;
    },
  }),
);

builder.mutationField('reportContextSaved', (t) =>
  t.boolean({
    description: 'A launcher uploaded the profile of its persisting session; true when it was kept.',
    args: { sessionId: t.arg.string({ required: true }) },
    resolve: async (_root, args, { deps, caller }) => {
      if (caller.kind !== 'launcher' || caller.sessionId !== args.sessionId) throw new Forbidden('only the session\'s own launcher may report its save');
      return (await contextSaved(deps, args.sessionId)) === null;
    },
  }),
);
