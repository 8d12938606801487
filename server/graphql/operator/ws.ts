// graphql-ws on the control plane's own listener, path /graphql only: the dashboard's live
// updates over one WebSocket. Operations run through the same yoga instance (its envelop
// plugins: query limits, error masking) as over HTTP. Other paths' upgrades are left to their
// own handlers (the CDP proxy and WebDriver relay listen on other ports anyway).
//
// Who may connect: operators by the access rule of /graphql (cookie, x-dashboard-token,
// loopback when no token is set), or a connection_init payload { dashboardToken } when
// DASHBOARD_TOKEN is set. Never through the public tunnel.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ExecutionArgs, GraphQLError } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import type { YogaServerInstance } from 'graphql-yoga';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Runtime } from '../../runtime/runtime.ts';
import { connectionTokenValid, upgradeAccess } from './auth.ts';

export const GRAPHQL_WS_PATH = '/graphql';

/** What the yoga context factory gets for a graphql-ws operation. */
export interface WsInitialContext {
  ws: { operator: boolean };
}

type Enveloped = { execute: (args: ExecutionArgs) => unknown; subscribe: (args: ExecutionArgs) => unknown };

function refuse(socket: Duplex, status: number, message: string): void {
  const body = JSON.stringify({ success: false, message });
  socket.end(`HTTP/1.1 ${status} ${status === 404 ? 'Not Found' : 'Unauthorized'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}

export function attachGraphQLWs<S extends object, U extends object>(server: Server, yoga: YogaServerInstance<S, U>, rt: Runtime): { close(): Promise<void> } {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 256 * 1024 });
  const operators = new WeakSet<IncomingMessage>();

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== GRAPHQL_WS_PATH) {
      // Nobody else listens for upgrades on this server: do not leave the socket hanging.
      if (server.listenerCount('upgrade') === 1) refuse(socket, 404, `no WebSocket endpoint at ${path}`);
      return;
    }
    const access = upgradeAccess(req, rt);
    if (access === 'tunnel') return refuse(socket, 404, `no route GET ${path}`);
    if (access === 'needs-token' && !rt.config.DASHBOARD_TOKEN) return refuse(socket, 401, 'operator access only: connect from this machine');
    if (access === 'operator') operators.add(req);
    wss.handleUpgrade(req, socket, head, (ws: WebSocket) => wss.emit('connection', ws, req));
  };
  server.on('upgrade', onUpgrade);

  const disposable = useServer(
    {
      isProd: false,
      // Refused connections are closed with 4403 Forbidden by graphql-ws.
      onConnect: (ctx) => operators.has(ctx.extra.request) || connectionTokenValid(ctx.connectionParams, rt),
      onSubscribe: async (ctx, _id, payload) => {
        const initial: WsInitialContext = { ws: { operator: true } };
        const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({ ...initial, req: ctx.extra.request, params: payload });
        let document;
        try {
          document = parse(payload.query);
        } catch (err) {
          return [err as GraphQLError];
        }
        const args: ExecutionArgs = {
          schema,
          operationName: payload.operationName ?? null,
          document,
          variableValues: payload.variables ?? null,
          contextValue: await contextFactory(),
          rootValue: { execute, subscribe } satisfies Enveloped,
        };
        const errors = validate(args.schema, args.document);
        if (errors.length) return errors;
        return args;
      },
      execute: (args) => (args.rootValue as Enveloped).execute(args) as never,
      subscribe: (args) => (args.rootValue as Enveloped).subscribe(args) as never,
    },
    wss,
  );

  return {
    async close() {
      server.off('upgrade', onUpgrade);
      for (const client of wss.clients) client.terminate();
      await disposable.dispose();
    },
  };
}
