// The session state table (schema/states.ts) against the spec's "States and transitions" and
// "SDK status mapping" tables, plus the rows docs/decisions.md fills in.
import { describe, expect, it } from 'vitest';
import { canTransition, internalFor, InternalStatus, LIVE_STATUSES, SdkStatus, toSdkStatus, TRANSITIONS, type InternalStatus as State } from '../../schema/states.ts';

const ALL = InternalStatus.options;
const ENDED: State[] = ['STOPPED', 'FAILED'];

describe('state table', () => {
  it('knows exactly the nine internal states of the spec', () => {
    expect([...ALL].sort()).toEqual(['ACTIVE', 'CREATING', 'FAILED', 'PROVISIONING', 'READY', 'RUNNING', 'STARTING', 'STOPPED', 'TERMINATING']);
    expect(Object.keys(TRANSITIONS).sort()).toEqual([...ALL].sort());
  });

  it.each<[State, State]>([
    ['CREATING', 'PROVISIONING'], // JWT generated and container task requested
    ['PROVISIONING', 'READY'], // container platform reports the task running
    ['READY', 'RUNNING'], // client attaches
    ['READY', 'STOPPED'], // REQUEST_RELEASE or timeout
    ['READY', 'FAILED'], // container or browser failure
  ])('allows the spec move %s -> %s', (from, to) => {
    expect(canTransition(from, to)).toBe(true);
  });

  it('lets every live state stop (release, timeout) or fail (decisions: lifecycle)', () => {
    for (const from of LIVE_STATUSES) {
      for (const to of ENDED) expect(canTransition(from, to), `${from} -> ${to}`).toBe(true);
    }
  });

  it('never moves out of an ended state (STOPPED and FAILED are final)', () => {
    for (const from of ENDED) {
      for (const to of ALL) expect(canTransition(from, to), `${from} -> ${to}`).toBe(false);
    }
  });

  it.each<[State, State]>([
    ['CREATING', 'READY'], // must pass through PROVISIONING
    ['CREATING', 'RUNNING'],
    ['PROVISIONING', 'CREATING'],
    ['PROVISIONING', 'RUNNING'], // nobody attaches before the browser is ready
    ['READY', 'CREATING'],
    ['READY', 'PROVISIONING'],
    ['RUNNING', 'READY'], // a second READY report must not rewind a used session
    ['RUNNING', 'PROVISIONING'],
    ['STOPPED', 'READY'], // a late READY report must not revive a released session
    ['FAILED', 'READY'],
    ['STOPPED', 'FAILED'],
    ['FAILED', 'STOPPED'],
  ])('refuses the move %s -> %s', (from, to) => {
    expect(canTransition(from, to)).toBe(false);
  });

  it('refuses a move to the same state (a repeated report changes nothing)', () => {
    for (const s of ALL) expect(canTransition(s, s), s).toBe(false);
  });

  it('treats every state but STOPPED and FAILED as live', () => {
    expect([...LIVE_STATUSES].sort()).toEqual(ALL.filter((s) => !ENDED.includes(s)).sort());
  });
});

describe('SDK status mapping', () => {
  it.each<[State, string]>([
    ['CREATING', 'RUNNING'],
    ['PROVISIONING', 'RUNNING'],
    ['STARTING', 'RUNNING'],
    ['READY', 'RUNNING'],
    ['ACTIVE', 'RUNNING'],
    ['TERMINATING', 'RUNNING'],
    ['RUNNING', 'RUNNING'],
    ['STOPPED', 'COMPLETED'],
    ['FAILED', 'ERROR'],
  ])('shows %s to the SDK as %s', (internal, sdk) => {
    expect(toSdkStatus(internal)).toBe(sdk);
    expect(toSdkStatus(internal, null)).toBe(sdk);
  });

  it('shows a session stopped by its timeout as TIMED_OUT and other stops as COMPLETED', () => {
    expect(toSdkStatus('STOPPED', 'TIMED_OUT')).toBe('TIMED_OUT');
    for (const reason of ['RELEASED', 'IDLE', 'BROWSER_EXITED', 'NODE_DOWN']) expect(toSdkStatus('STOPPED', reason)).toBe('COMPLETED');
  });

  it('shows a failed session as ERROR whatever the reason, and a live one as RUNNING', () => {
    expect(toSdkStatus('FAILED', 'TIMED_OUT')).toBe('ERROR');
    expect(toSdkStatus('FAILED', 'READY_WAIT_EXPIRED')).toBe('ERROR');
    expect(toSdkStatus('READY', 'TIMED_OUT')).toBe('RUNNING');
  });

  it('only ever produces the four SDK statuses', () => {
    for (const s of ALL) for (const r of [null, 'TIMED_OUT', 'RELEASED']) expect(SdkStatus.options).toContain(toSdkStatus(s, r));
  });
});

describe('internalFor (the list status filter)', () => {
  it.each<[SdkStatus, State[]]>([
    ['RUNNING', ['CREATING', 'PROVISIONING', 'STARTING', 'READY', 'ACTIVE', 'RUNNING', 'TERMINATING']],
    ['COMPLETED', ['STOPPED']],
    ['TIMED_OUT', ['STOPPED']],
    ['ERROR', ['FAILED']],
  ])('selects for %s the internal states %j', (sdk, expected) => {
    expect([...internalFor(sdk)].sort()).toEqual([...expected].sort());
  });

  it('agrees with toSdkStatus: a state is selected by a filter exactly when it can show that status', () => {
    for (const sdk of SdkStatus.options) {
      const canShow = ALL.filter((s) => [null, 'TIMED_OUT', 'RELEASED'].some((r) => toSdkStatus(s, r) === sdk));
      expect([...internalFor(sdk)].sort(), sdk).toEqual(canShow.sort());
    }
  });
});
