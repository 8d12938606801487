// The operations the dashboard sends, each with the shape of its answer (the types follow
// schema.graphql at the repo root, which the server writes from its Pothos builder).
import { gql } from 'urql';

export type SessionStatus = 'RUNNING' | 'COMPLETED' | 'ERROR' | 'TIMED_OUT';

export interface SessionEvent {
  seq: string;
  sessionId: string;
  projectId: string;
  from: string | null;
  to: string;
  status: SessionStatus;
  reason: string | null;
  at: string;
}

export interface SessionSummary {
  id: string;
  projectId: string;
  status: SessionStatus;
  internalStatus: string;
  endReason: string | null;
  nodeId: string | null;
  region: string;
  keepAlive: boolean;
  userMetadata: Record<string, unknown>;
  createdAt: string;
  endedAt: string | null;
  live: boolean;
}

export interface SessionDetail extends SessionSummary {
  errorMessage: string | null;
  timeout: number;
  browserSettings: Record<string, unknown>;
  contextId: string | null;
  publicIp: string | null;
  updatedAt: string;
  expiresAt: string;
  events: SessionEvent[];
  node: { id: string; publicHost: string; status: string } | null;
  project: { id: string; name: string };
}

export interface NodeInfo {
  id: string;
  name: string;
  status: 'UP' | 'DRAINING' | 'DOWN';
  healthy: boolean;
  publicHost: string;
  cdpPort: number;
  webdriverPort: number | null;
  tls: boolean;
  capacity: number;
  running: number;
  free: number;
  lastSeenAt: string;
  lastHeartbeatAt: string | null;
  nomadNodeId: string | null;
}

export interface UsagePoint {
  at: string;
  browserMinutes: number;
}

export interface ProjectInfo {
  id: string;
  name: string;
  concurrency: number;
  defaultTimeout: number;
  createdAt: string;
  runningSessions: number;
  usage: { browserMinutes: number; proxyBytes: number };
  usageSeries: UsagePoint[];
}

export interface ApiKeyInfo {
  id: string;
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
  projectIds: string[];
}

export interface PublicHttpsInfo {
  enabled: boolean;
  provider: string;
  status: 'disabled' | 'idle' | 'starting' | 'ready' | 'error' | 'stopped';
  publicUrl: string;
  host: string;
  targetUrl: string;
  startedAt: string;
  lastError: string;
}

export interface SettingsEnvelope {
  intent: Record<string, unknown>;
  effective: Record<string, unknown>;
  bindings: Record<string, unknown>;
  _meta: { updatedAt: string; saveAppliedToRuntime: boolean; saveApplyError: string | null };
}

const SESSION_SUMMARY = gql`
  fragment SessionSummary on Session {
    id projectId status internalStatus endReason nodeId region keepAlive userMetadata createdAt endedAt live
  }
`;

export const SessionsQuery = gql<
  { sessions: { nodes: SessionSummary[]; totalCount: number; pageInfo: { endCursor: string | null; hasNextPage: boolean } } },
  { filter: Record<string, unknown>; first: number; after: string | null }
>`
  query Sessions($filter: SessionFilter, $first: Int, $after: String) {
    sessions(filter: $filter, first: $first, after: $after) {
      totalCount
      pageInfo { endCursor hasNextPage }
      nodes { ...SessionSummary }
    }
  }
  ${SESSION_SUMMARY}
`;

export const OverviewQuery = gql<{
  running: { totalCount: number };
  nodes: Pick<NodeInfo, 'id' | 'status' | 'healthy' | 'capacity' | 'running'>[];
  projects: { id: string; name: string }[];
  publicHttps: PublicHttpsInfo;
}>`
  query Overview {
    running: sessions(filter: { status: RUNNING }, first: 1) { totalCount }
    nodes { id status healthy capacity running }
    projects { id name }
    publicHttps { enabled provider status publicUrl host targetUrl startedAt lastError }
  }
`;

export const SessionQuery = gql<{ session: SessionDetail | null }, { id: string }>`
  query Session($id: ID!) {
    session(id: $id) {
      ...SessionSummary
      errorMessage timeout browserSettings contextId publicIp updatedAt expiresAt
      events { seq from to status reason at sessionId projectId }
      node { id publicHost status }
      project { id name }
    }
  }
  ${SESSION_SUMMARY}
`;

export const SessionEventsSubscription = gql<{ sessionEvents: SessionEvent }, { sessionId?: string | null; projectId?: string | null }>`
  subscription SessionEvents($sessionId: ID, $projectId: String) {
    sessionEvents(sessionId: $sessionId, projectId: $projectId) { seq sessionId projectId from to status reason at }
  }
`;

export const ReleaseSessionMutation = gql<{ releaseSession: { id: string; status: SessionStatus; live: boolean } }, { id: string }>`
  mutation ReleaseSession($id: ID!) {
    releaseSession(id: $id) { id status live endedAt internalStatus endReason }
  }
`;

export const CreateShareLinkMutation = gql<{ createShareLink: { token: string; url: string; publicUrl: string | null; expiresAt: string } }, { sessionId: string; ttlMinutes?: number }>`
  mutation CreateShareLink($sessionId: ID!, $ttlMinutes: Int) {
    createShareLink(sessionId: $sessionId, ttlMinutes: $ttlMinutes) { token url publicUrl expiresAt }
  }
`;

export const NodesQuery = gql<{ nodes: NodeInfo[] }>`
  query Nodes {
    nodes { id name status healthy publicHost cdpPort webdriverPort tls capacity running free lastSeenAt lastHeartbeatAt nomadNodeId }
  }
`;

export const NodesSubscription = gql<{ nodesChanged: NodeInfo[] }>`
  subscription NodesChanged {
    nodesChanged { id name status healthy publicHost cdpPort webdriverPort tls capacity running free lastSeenAt lastHeartbeatAt nomadNodeId }
  }
`;

export const ProjectsQuery = gql<{ projects: ProjectInfo[]; apiKeys: ApiKeyInfo[] }, { granularity: 'HOUR' | 'DAY'; buckets: number }>`
  query Projects($granularity: UsageGranularity, $buckets: Int) {
    projects {
      id name concurrency defaultTimeout createdAt runningSessions
      usage { browserMinutes proxyBytes }
      usageSeries(granularity: $granularity, buckets: $buckets) { at browserMinutes }
    }
    apiKeys { id prefix createdAt revokedAt projectIds }
  }
`;

export const CreateProjectMutation = gql<{ createProject: { id: string; name: string } }, { name: string; concurrency?: number; defaultTimeout?: number }>`
  mutation CreateProject($name: String!, $concurrency: Int, $defaultTimeout: Int) {
    createProject(name: $name, concurrency: $concurrency, defaultTimeout: $defaultTimeout) { id name }
  }
`;

export const CreateApiKeyMutation = gql<{ createApiKey: { id: string; key: string; projectIds: string[] } }, { projectIds: string[] }>`
  mutation CreateApiKey($projectIds: [String!]!) {
    createApiKey(projectIds: $projectIds) { id key projectIds }
  }
`;

export const RevokeApiKeyMutation = gql<{ revokeApiKey: boolean }, { id: string }>`
  mutation RevokeApiKey($id: ID!) { revokeApiKey(id: $id) }
`;

const SETTINGS_FIELDS = `intent effective bindings _meta { updatedAt saveAppliedToRuntime saveApplyError }`;

export const SettingsQuery = gql<{ settings: SettingsEnvelope; publicHttps: PublicHttpsInfo }>`
  query Settings {
    settings { ${SETTINGS_FIELDS} }
    publicHttps { enabled provider status publicUrl host targetUrl startedAt lastError }
  }
`;

export const SettingsSubscription = gql<{ settingsChanged: SettingsEnvelope }>`
  subscription SettingsChanged { settingsChanged { ${SETTINGS_FIELDS} } }
`;

export const SaveSettingsMutation = gql<
  { saveSettings: { saved: boolean; message: string | null; settings: SettingsEnvelope } },
  { intent: Record<string, unknown>; expectedUpdatedAt: string }
>`
  mutation SaveSettings($intent: JSON!, $expectedUpdatedAt: String!) {
    saveSettings(intent: $intent, expectedUpdatedAt: $expectedUpdatedAt) {
      saved message
      settings { ${SETTINGS_FIELDS} }
    }
  }
`;
