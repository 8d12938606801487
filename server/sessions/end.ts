// Ends sessions: at the caller's request (release), on timeout, when idle, or when the task
// that holds the browser ends; the scheduler is asked to stop, best effort.
import { UpdateSessionBody } from '../../schema/rest.ts';
import { toSdkStatus, InternalStatus, type EndReason } from '../../schema/states.ts';
import type { KeyAuth } from '../auth/apiKeys.ts';
import type { Deps } from '../deps.ts';
import { NotFound } from '../errors.ts';
import { parseInput } from '../validate.ts';
import { findSession } from './read.ts';
import { transition } from './transition.ts';

export async function endSession(deps: Deps, id: string, to: 'STOPPED' | 'FAILED', reason: EndReason, message?: string): Promise<boolean> {
  const row = await transition(deps, id, to, { reason, ...(message ? { message } : {}) });
  if (!row) return false;
  deps.log.info({ sessionId: id, projectId: row.projectId, reason }, 'session ended');
  if (row.taskRef) {
    const taskRef = row.taskRef;
    void deps.scheduler.stop(taskRef).catch((err) => deps.log.warn({ err, sessionId: id }, 'stopping the browser task failed'));
  }
  return true;
}

export async function releaseSession(deps: Deps, auth: KeyAuth, id: string, input: unknown) {
  const body = parseInput(UpdateSessionBody, input);
  const session = await findSession(deps.db, auth, id);
  if (body.projectId !== undefined && body.projectId !== session.projectId) throw new NotFound(`session ${id} not found`);
  const ended = await endSession(deps, id, 'STOPPED', 'RELEASED');
  // Releasing an ended session is not an error: it reports the status it ended with.
  const status = ended ? 'TERMINATING' : toSdkStatus(InternalStatus.parse(session.status), session.endReason);
  return { id, status, projectId: session.projectId };
}
