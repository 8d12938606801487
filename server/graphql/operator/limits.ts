// Bounds on what one GraphQL operation may ask for, checked at validation (before anything
// runs), over HTTP, SSE and graphql-ws alike. The dashboard's deepest query is 3 levels; its
// costliest well under the cost limit. Refusals name the limit and what was found
// ("Syntax Error: Query depth limit of 8 exceeded, found 9.").
import { costLimitPlugin } from '@escape.tech/graphql-armor-cost-limit';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';

export const MAX_DEPTH = 8;
export const MAX_ALIASES = 15;
export const MAX_COST = 5_000;

export function queryLimits() {
  return [
    maxDepthPlugin({ n: MAX_DEPTH, flattenFragments: true }),
    maxAliasesPlugin({ n: MAX_ALIASES }),
    costLimitPlugin({ maxCost: MAX_COST }),
  ];
}
