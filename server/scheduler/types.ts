// The Scheduler interface: places one browser launcher per session and stops it.
import type { Viewport } from '../../schema/agent.ts';
import type { LaunchContext } from '../contexts/attach.ts';

export interface LaunchSpec {
  sessionId: string;
  projectId: string;
  keepAlive: boolean;
  viewport?: Viewport;
  /** Session-scoped credential the launcher reports with. */
  launcherToken: string;
  /** Control plane base URL (GraphQL at /graphql). */
  controlUrl: string;
  /** The context profile to load before the browser starts, and where to save it. */
  context?: LaunchContext;
}

export interface Placement {
  taskRef: string;
  nodeId: string;
}

export interface Scheduler {
  /** Starts the launcher; resolves once it is placed (not when the browser is ready). */
  start(spec: LaunchSpec): Promise<Placement>;
  /** Stops the launcher; best effort, idempotent. */
  stop(taskRef: string): Promise<void>;
  close(): Promise<void>;
}
