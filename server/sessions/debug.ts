// GET /v1/sessions/{id}/debug: the live pages of the session's browser, with URLs routed
// through the node's authenticated proxy.
import { z } from 'zod';
import type { KeyAuth } from '../auth/apiKeys.ts';
import type { Deps } from '../deps.ts';
import { Conflict, Unavailable } from '../errors.ts';
import { findSession } from './read.ts';
import { isTerminal } from './transition.ts';
import { proxyBase } from './urls.ts';

const Target = z.object({ id: z.string(), type: z.string(), url: z.string(), title: z.string(), webSocketDebuggerUrl: z.string().optional(), faviconUrl: z.string().optional() });

function inspectorUrl(wsUrl: string, fullscreen: boolean): string {
  const scheme = wsUrl.startsWith('wss:') ? 'wss' : 'ws';
  const target = wsUrl.replace(/^wss?:\/\//, '');
  const page = fullscreen ? 'devtools_app.html' : 'inspector.html';
  return `devtools://devtools/bundled/${page}?${scheme}=${encodeURIComponent(target)}`;
}

export async function sessionDebug(deps: Deps, auth: KeyAuth, id: string) {
  const session = await findSession(deps.db, auth, id);
  if (isTerminal(session.status)) throw new Conflict(`session ${id} has ended; its browser is gone`);
  const node = session.nodeId ? await deps.db.node.findUnique({ where: { id: session.nodeId } }) : null;
  if (!node || !session.connectUrl) throw new Conflict(`session ${id} is not ready yet`);
  const base = proxyBase(node);
  const res = await fetch(`${base.http}/json/list?signingKey=${session.signingKey}`, { signal: AbortSignal.timeout(5000) }).catch((err: Error) => {
    throw new Unavailable(`the browser node did not answer: ${err.message}`);
  });
  if (!res.ok) throw new Unavailable(`the browser node answered ${res.status}`);
  const targets = z.array(Target).parse(await res.json()).filter((t) => t.type === 'page');
  const wsUrl = session.connectUrl;
  const pages = targets.map((t) => {
    const pageWs = t.webSocketDebuggerUrl ?? `${base.ws}/devtools/page/${t.id}?signingKey=${session.signingKey}`;
    return {
      id: t.id,
      url: t.url,
      title: t.title,
      faviconUrl: t.faviconUrl ?? '',
      wsUrl: pageWs,
      debuggerUrl: inspectorUrl(pageWs, false),
      debuggerFullscreenUrl: inspectorUrl(pageWs, true),
    };
  });
  const first = pages[0];
  return {
    wsUrl,
    debuggerUrl: first?.debuggerUrl ?? inspectorUrl(wsUrl, false),
    debuggerFullscreenUrl: first?.debuggerFullscreenUrl ?? inspectorUrl(wsUrl, true),
    pages,
  };
}
