// POST /sessions/{id}/cdp-url: a fresh, shorter-lived token and the direct-mode URL.
import { CdpUrlBody } from '../../schema/rest.ts';
import type { KeyAuth } from '../auth/apiKeys.ts';
import { signCdpToken } from '../auth/tokens.ts';
import type { Deps } from '../deps.ts';
import { Conflict } from '../errors.ts';
import { parseInput } from '../validate.ts';
import { findSession } from './read.ts';
import { isTerminal } from './transition.ts';
import { proxyBase } from './urls.ts';

export async function createCdpUrl(deps: Deps, auth: KeyAuth, id: string, input: unknown) {
  const body = parseInput(CdpUrlBody, input);
  const session = await findSession(deps.db, auth, id);
  if (isTerminal(session.status)) throw new Conflict(`session ${id} has ended; create a new session`);
  const node = session.nodeId ? await deps.db.node.findUnique({ where: { id: session.nodeId } }) : null;
  if (!node || !session.connectUrl) throw new Conflict(`session ${id} is not ready yet`);
  const now = Math.floor(deps.clock.now() / 1000);
  // Never outlive the session itself.
  const exp = Math.min(now + (body.expiresIn ?? 3600), Number(session.expiresAt));
  const meta = session.userMetadata as Record<string, unknown>;
  const signingKey = await signCdpToken(deps.secrets, {
    sessionId: id, projectId: session.projectId, issuedAt: now, expiresAt: exp,
    ...(typeof meta.userId === 'string' ? { userId: meta.userId } : {}),
  });
  return { cdpUrl: `${proxyBase(node).ws}/session/${id}`, signingKey, expiresAt: new Date(exp * 1000).toISOString() };
}
