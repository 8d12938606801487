// The dashboard's GraphQL client: queries and mutations over HTTP (/graphql, with the session
// cookie), subscriptions over one graphql-ws socket on the same path. It reports two things the
// layout shows: whether the live connection is up, and whether the server wants a login.
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import { Client, cacheExchange, fetchExchange, mapExchange, subscriptionExchange, type CombinedError } from 'urql';

export type LiveState = 'connecting' | 'live' | 'reconnecting';

export interface ApiEvents {
  onLive(state: LiveState): void;
  /** The server answered 401 (no session, or it expired). */
  onUnauthorized(): void;
}

/** 401 from the access hook, or the socket refused with 4403 by graphql-ws. */
export function isUnauthorized(error: CombinedError | undefined): boolean {
  if (!error) return false;
  const status = (error.response as { status?: number } | undefined)?.status;
  return status === 401 || error.graphQLErrors.some((e) => (e.extensions as { status?: number } | undefined)?.status === 401);
}

/** A message for people: what went wrong and what to do. */
export function describeError(error: CombinedError | Error | undefined): string {
  if (!error) return '';
  if ('graphQLErrors' in error) {
    if (isUnauthorized(error)) return 'Your dashboard session has ended. Log in again to continue.';
    const gql = error.graphQLErrors[0];
    if (gql) return gql.message;
    if (error.networkError) return 'The control plane did not answer. Check that it is running, then retry.';
  }
  return error.message.replace(/^\[(GraphQL|Network)\] /, '');
}

export function createApi(events: ApiEvents): { client: Client; ws: WsClient } {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  let connectedOnce = false;
  const ws = createWsClient({
    url: `${scheme}://${location.host}/graphql`,
    // Connected from the start, so that the top bar can say whether updates are live.
    lazy: false,
    keepAlive: 10_000,
    retryAttempts: Number.POSITIVE_INFINITY,
    // 4403: the server refused the credentials; retrying would not help before a login.
    shouldRetry: (e) => (e as CloseEvent | undefined)?.code !== 4403,
    retryWait: async (retries) => {
      await new Promise((r) => setTimeout(r, Math.min(5_000, 300 * 2 ** retries)));
    },
    on: {
      connected: () => {
        connectedOnce = true;
        events.onLive('live');
      },
      closed: (event) => {
        if ((event as CloseEvent | undefined)?.code === 4403) events.onUnauthorized();
        events.onLive(connectedOnce ? 'reconnecting' : 'connecting');
      },
    },
  });

  const client = new Client({
    url: '/graphql',
    fetchOptions: { credentials: 'same-origin', headers: { accept: 'application/graphql-response+json, application/json' } },
    requestPolicy: 'cache-and-network',
    exchanges: [
      mapExchange({
        onError(error) {
          if (isUnauthorized(error)) events.onUnauthorized();
        },
      }),
      cacheExchange,
      fetchExchange,
      subscriptionExchange({
        forwardSubscription(request) {
          const input = { ...request, query: request.query ?? '' };
          return {
            subscribe(sink) {
              const unsubscribe = ws.subscribe(input, sink);
              return { unsubscribe };
            },
          };
        },
      }),
    ],
  });
  return { client, ws };
}
