// Operator GraphQL for sessions: the filtered, paged list, one session with its ordered change
// events, release, and the live stream of session changes (from deps.bus).
import { Repeater } from 'graphql-yoga';
import { endSession } from '../../sessions/end.ts';
import type { SessionChange } from '../../events/bus.ts';
import { NotFound } from '../../errors.ts';
import { getProject } from '../../projects/projects.ts';
import { builder } from '../builder.ts';
import { operatorOf } from './auth.ts';
import { readNodes } from './nodeReads.ts';
import { eventFromChange, listOperatorSessions, MAX_PAGE, sessionEvents, type SessionEventItem, type SessionPage } from './sessionReads.ts';
import { NodeRef, ProjectRef, SessionEventRef, SessionRef, SessionStatusEnum } from './types.ts';

const SessionFilterInput = builder.inputType('SessionFilter', {
  description: 'All given conditions must hold.',
  fields: (t) => ({
    projectId: t.string(),
    status: t.field({ type: SessionStatusEnum }),
    nodeId: t.string(),
    metadata: t.field({ type: 'JSON', description: 'A string: userMetadata contains it; an object: userMetadata has exactly those fields and values.' }),
  }),
});

const PageInfoRef = builder.objectRef<SessionPage['pageInfo']>('PageInfo').implement({
  fields: (t) => ({
    endCursor: t.exposeString('endCursor', { nullable: true, description: 'Pass as `after` for the next page.' }),
    hasNextPage: t.exposeBoolean('hasNextPage'),
  }),
});

const SessionConnectionRef = builder.objectRef<SessionPage>('SessionConnection').implement({
  fields: (t) => ({
    nodes: t.field({ type: [SessionRef], resolve: (p) => p.nodes }),
    pageInfo: t.field({ type: PageInfoRef, resolve: (p) => p.pageInfo }),
    totalCount: t.exposeInt('totalCount', { description: 'Sessions matching the filter, on every page.' }),
  }),
});

builder.objectFields(SessionRef, (t) => ({
  events: t.field({
    type: [SessionEventRef],
    description: 'The change events of this session, in stream order.',
    resolve: (s, _a, ctx) => sessionEvents(ctx.deps.db, s.id),
  }),
  node: t.field({
    type: NodeRef,
    nullable: true,
    resolve: async (s, _a, ctx) => (s.nodeId ? (await readNodes(ctx.deps, s.nodeId))[0] ?? null : null),
  }),
  project: t.field({ type: ProjectRef, resolve: (s, _a, ctx) => getProject(ctx.deps.db, s.projectId) }),
}));

// The sessions of one project or one node: the same list, pre-filtered.
for (const [ref, key] of [[ProjectRef, 'projectId'], [NodeRef, 'nodeId']] as const) {
  builder.objectField(ref, 'sessions', (t) =>
    t.field({
      type: SessionConnectionRef,
      args: { status: t.arg({ type: SessionStatusEnum }), first: t.arg.int({ defaultValue: 20 }), after: t.arg.string() },
      resolve: (parent, args, ctx) =>
        listOperatorSessions(ctx.deps.db, { [key]: parent.id, ...(args.status ? { status: args.status } : {}) }, args.first ?? 20, args.after),
    }),
  );
}

builder.queryFields((t) => ({
  sessions: t.field({
    type: SessionConnectionRef,
    description: `Sessions of every project, newest first; at most ${MAX_PAGE} per page.`,
    args: {
      filter: t.arg({ type: SessionFilterInput }),
      first: t.arg.int({ defaultValue: 50 }),
      after: t.arg.string(),
    },
    resolve: (_r, args, ctx) => {
      operatorOf(ctx);
      const filter = Object.fromEntries(Object.entries(args.filter ?? {}).filter(([, v]) => v !== null && v !== undefined));
      return listOperatorSessions(ctx.deps.db, filter, args.first ?? 50, args.after);
    },
  }),
  session: t.field({
    type: SessionRef,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, args, ctx) => {
      operatorOf(ctx);
      return ctx.deps.db.session.findUnique({ where: { id: String(args.id) } });
    },
  }),
}));

builder.mutationField('releaseSession', (t) =>
  t.field({
    type: SessionRef,
    description: 'Ends a session as REQUEST_RELEASE does; an ended session is returned as it is.',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_r, args, ctx) => {
      operatorOf(ctx);
      const id = String(args.id);
      const before = await ctx.deps.db.session.findUnique({ where: { id }, select: { id: true } });
      if (!before) throw new NotFound(`session ${id} not found`);
      await endSession(ctx.deps, id, 'STOPPED', 'RELEASED');
      const row = await ctx.deps.db.session.findUnique({ where: { id } });
      if (!row) throw new NotFound(`session ${id} not found`);
      return row;
    },
  }),
);

builder.subscriptionField('sessionEvents', (t) =>
  t.field({
    type: SessionEventRef,
    description: 'Every session change as it happens (optionally of one project or one session).',
    args: { projectId: t.arg.string(), sessionId: t.arg.id() },
    subscribe: (_r, args, ctx) => {
      operatorOf(ctx);
      const { bus, clock } = ctx.deps;
      return new Repeater<SessionEventItem>(async (push, stop) => {
        const unsubscribe = bus.subscribe((c: SessionChange) => {
          if (args.projectId && c.projectId !== args.projectId) return;
          if (args.sessionId && c.sessionId !== String(args.sessionId)) return;
          void push(eventFromChange(c, clock.now()));
        });
        await stop;
        unsubscribe();
      });
    },
    resolve: (e: SessionEventItem) => e,
  }),
);
