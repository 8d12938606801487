// Session states of the spec, the allowed transitions and the SDK-visible mapping.
import { z } from 'zod';

export const InternalStatus = z.enum([
  'CREATING', 'PROVISIONING', 'READY', 'ACTIVE', 'STARTING', 'RUNNING', 'TERMINATING', 'STOPPED', 'FAILED',
]);
export type InternalStatus = z.infer<typeof InternalStatus>;

export const SdkStatus = z.enum(['RUNNING', 'COMPLETED', 'ERROR', 'TIMED_OUT']);
export type SdkStatus = z.infer<typeof SdkStatus>;

/** Why a session ended. TIMED_OUT is reported to the SDK as its own status. */
export const EndReason = z.enum(['RELEASED', 'TIMED_OUT', 'IDLE', 'BROWSER_EXITED', 'FAILED', 'READY_WAIT_EXPIRED', 'NODE_DOWN']);
export type EndReason = z.infer<typeof EndReason>;

const ENDS: InternalStatus[] = ['STOPPED', 'FAILED'];

/**
 * The state table. The spec's rows plus the ones it leaves open (decided in docs/decisions.md):
 * every live state may stop (release, timeout) or fail (container or browser failure), and
 * READY moves to RUNNING when a client attaches.
 */
export const TRANSITIONS: Record<InternalStatus, readonly InternalStatus[]> = {
  CREATING: ['PROVISIONING', ...ENDS],
  PROVISIONING: ['READY', ...ENDS],
  STARTING: ['READY', ...ENDS],
  READY: ['RUNNING', 'ACTIVE', ...ENDS],
  ACTIVE: ['RUNNING', ...ENDS],
  RUNNING: ENDS,
  TERMINATING: ENDS,
  STOPPED: [],
  FAILED: [],
};

export const LIVE_STATUSES: InternalStatus[] = ['CREATING', 'PROVISIONING', 'STARTING', 'READY', 'ACTIVE', 'RUNNING', 'TERMINATING'];

export function canTransition(from: InternalStatus, to: InternalStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

export function toSdkStatus(status: InternalStatus, endReason?: string | null): SdkStatus {
  if (status === 'FAILED') return 'ERROR';
  if (status === 'STOPPED') return endReason === 'TIMED_OUT' ? 'TIMED_OUT' : 'COMPLETED';
  return 'RUNNING';
}

/** The internal statuses an SDK status filter selects. */
export function internalFor(sdk: SdkStatus): InternalStatus[] {
  switch (sdk) {
    case 'RUNNING': return LIVE_STATUSES;
    case 'ERROR': return ['FAILED'];
    case 'COMPLETED': case 'TIMED_OUT': return ['STOPPED'];
  }
}

/** One entry of the ordered session change stream, as published on the event bus (and as a
 *  PostgreSQL NOTIFY payload between replicas). */
export const SessionChange = z.object({
  /** Position in the SessionEvent change stream. */
  seq: z.string(),
  sessionId: z.string(),
  projectId: z.string(),
  from: InternalStatus.nullable(),
  to: InternalStatus,
  reason: z.string().nullable(),
});
export type SessionChange = z.infer<typeof SessionChange>;
