// The one Pothos schema builder of the control plane's GraphQL API.
import SchemaBuilder from '@pothos/core';
import type { Deps } from '../deps.ts';

/** Who is calling: a launcher (one session), a node agent, or nobody. */
export type Caller =
  | { kind: 'launcher'; sessionId: string }
  | { kind: 'node'; nodeId: string }
  | { kind: 'anonymous' };

export interface GraphQLContext {
  deps: Deps;
  caller: Caller;
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
