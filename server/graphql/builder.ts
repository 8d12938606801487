// The one Pothos schema builder of the control plane's GraphQL API.
import SchemaBuilder from '@pothos/core';
import type { Deps } from '../deps.ts';
import type { Runtime } from '../runtime/runtime.ts';

/** Who is calling: a launcher (one session), a node agent, or nobody. */
export type Caller =
  | { kind: 'launcher'; sessionId: string }
  | { kind: 'node'; nodeId: string }
  | { kind: 'anonymous' };

export interface GraphQLContext {
  deps: Deps;
  caller: Caller;
  /** Present only when the request carries the operator credential (dashboard cookie or
   *  x-dashboard-token; loopback when no DASHBOARD_TOKEN is set): the operator queries use it. */
  operator?: { runtime: Runtime };
}

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  Scalars: { JSON: { Input: unknown; Output: unknown } };
}>({});

builder.scalarType('JSON', {
  description: 'Any JSON value; inputs are validated with the zod contracts of schema/.',
  serialize: (v) => v,
  parseValue: (v) => v,
});
builder.queryType({});
builder.mutationType({});
