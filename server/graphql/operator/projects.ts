// Operator GraphQL for projects and API keys: projects with usage (total and over time),
// creating projects, and creating and revoking API keys (the use cases of server/auth and
// server/projects, as the tRPC operator API uses them).
import { LIVE_STATUSES } from '../../../schema/states.ts';
import { createApiKey, listApiKeys, revokeApiKey } from '../../auth/apiKeys.ts';
import { createProject, getProject, listProjects, projectUsage } from '../../projects/projects.ts';
import { builder } from '../builder.ts';
import { operatorOf } from './auth.ts';
import { MAX_BUCKETS, usageSeries } from './usageSeries.ts';
import { ApiKeyRef, CreatedApiKeyRef, ProjectRef, UsageGranularityEnum, UsagePointRef, UsageRef } from './types.ts';

ProjectRef.implement({
  description: 'A project: concurrency limit, default timeout, and what it used.',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    defaultTimeout: t.exposeInt('defaultTimeout', { description: 'Seconds.' }),
    concurrency: t.exposeInt('concurrency'),
    createdAt: t.exposeString('createdAt'),
    updatedAt: t.exposeString('updatedAt'),
    usage: t.field({ type: UsageRef, resolve: (p, _a, ctx) => projectUsage(ctx.deps.db, p.id, ctx.deps.clock.now()) }),
    usageSeries: t.field({
      type: [UsagePointRef],
      description: `Browser minutes per hour or day (UTC), oldest first, ending with the current bucket; at most ${MAX_BUCKETS} buckets.`,
      args: {
        granularity: t.arg({ type: UsageGranularityEnum, defaultValue: 'HOUR' }),
        buckets: t.arg.int({ defaultValue: 24 }),
      },
      resolve: (p, args, ctx) => usageSeries(ctx.deps.db, p.id, args.granularity ?? 'HOUR', args.buckets ?? 24, ctx.deps.clock.now()),
    }),
    runningSessions: t.int({
      description: 'Live sessions now (what counts against concurrency).',
      resolve: (p, _a, ctx) => ctx.deps.db.session.count({ where: { projectId: p.id, status: { in: LIVE_STATUSES } } }),
    }),
  }),
});

builder.queryFields((t) => ({
  projects: t.field({
    type: [ProjectRef],
    resolve: (_r, _a, ctx) => {
      operatorOf(ctx);
      return listProjects(ctx.deps.db);
    },
  }),
  project: t.field({
    type: ProjectRef,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, args, ctx) => {
      operatorOf(ctx);
      return getProject(ctx.deps.db, String(args.id));
    },
  }),
  apiKeys: t.field({
    type: [ApiKeyRef],
    resolve: (_r, _a, ctx) => {
      operatorOf(ctx);
      return listApiKeys(ctx.deps.db);
    },
  }),
}));

builder.mutationFields((t) => ({
  createProject: t.field({
    type: ProjectRef,
    args: {
      name: t.arg.string({ required: true }),
      concurrency: t.arg.int(),
      defaultTimeout: t.arg.int({ description: 'Seconds (60..86400).' }),
    },
    resolve: (_r, args, ctx) => {
      operatorOf(ctx);
      return createProject(ctx.deps.db, {
        name: args.name,
        ...(args.concurrency != null ? { concurrency: args.concurrency } : {}),
        ...(args.defaultTimeout != null ? { defaultTimeout: args.defaultTimeout } : {}),
      });
    },
  }),
  createApiKey: t.field({
    type: CreatedApiKeyRef,
    description: 'A new key reaching these projects; the key itself is in this reply only.',
    args: { projectIds: t.arg.stringList({ required: true }) },
    resolve: (_r, args, ctx) => {
      operatorOf(ctx);
      return createApiKey(ctx.deps.db, args.projectIds);
    },
  }),
  revokeApiKey: t.boolean({
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_r, args, ctx) => {
      operatorOf(ctx);
      return (await revokeApiKey(ctx.deps.db, String(args.id))).revoked;
    },
  }),
}));
