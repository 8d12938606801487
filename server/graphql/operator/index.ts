// The operator (dashboard) part of the GraphQL schema: importing this registers its types,
// queries, mutations and subscriptions on the one builder.
import './types.ts';
import './sessions.ts';
import './projects.ts';
import './nodes.ts';
import './settings.ts';
