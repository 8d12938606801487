// The operator GraphQL object types, each built over the model it shows: Prisma rows (Session,
// Project), the zod contracts of schema/ (session events, settings meta, public entrypoint
// state, share links) and the views of the use cases (nodes, API keys, usage). Nothing is
// declared twice: enum values come from the zod enums, fields from the models' own types.
import { PublicHttpsStatus, type PublicHttpsState, type SessionActivity, type ShareCreated } from '../../../schema/runtime.ts';
import type { SettingsEnvelope, SettingsMeta } from '../../../schema/settings/settings.ts';
import { EndReason, InternalStatus, SdkStatus, toSdkStatus } from '../../../schema/states.ts';
import { NodeStatus } from '../../../schema/node.ts';
import type { listApiKeys } from '../../auth/apiKeys.ts';
import type { SessionRow } from '../../db/client.ts';
import type { NodeView } from '../../nodes/drain.ts';
import type { ProjectView, Usage } from '../../projects/projects.ts';
import { builder } from '../builder.ts';
import type { NodeItem } from './nodeReads.ts';
import type { UsagePoint } from './usageSeries.ts';

const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

export const SessionStatusEnum = builder.enumType('SessionStatus', {
  description: 'The SDK-visible status (browser-session spec, "SDK status mapping").',
  values: SdkStatus.options,
});
export const InternalStatusEnum = builder.enumType('InternalSessionStatus', {
  description: 'The internal session state (browser-session spec, "States and transitions").',
  values: InternalStatus.options,
});
export const EndReasonEnum = builder.enumType('EndReason', { values: EndReason.options });
export const NodeStatusEnum = builder.enumType('NodeStatus', { values: NodeStatus.options });
export const PublicHttpsStatusEnum = builder.enumType('PublicHttpsStatus', { values: PublicHttpsStatus.options });
export const UsageGranularityEnum = builder.enumType('UsageGranularity', { values: ['HOUR', 'DAY'] as const });

/** One entry of the ordered session change stream (SessionEvent table, or the bus). */
export const SessionEventRef = builder.objectRef<Omit<SessionActivity, 'type'>>('SessionEvent').implement({
  description: 'One transition of a session, in the order of the change stream (`seq`).',
  fields: (t) => ({
    seq: t.exposeString('seq', { description: 'Position in the change stream (a 64-bit integer, as text).' }),
    sessionId: t.exposeString('sessionId'),
    projectId: t.exposeString('projectId'),
    from: t.field({ type: InternalStatusEnum, nullable: true, resolve: (e) => e.from }),
    to: t.field({ type: InternalStatusEnum, resolve: (e) => e.to }),
    status: t.field({ type: SessionStatusEnum, description: 'The SDK status after this change.', resolve: (e) => toSdkStatus(e.to, e.reason) }),
    reason: t.exposeString('reason', { nullable: true }),
    at: t.exposeString('at', { description: 'ISO 8601.' }),
  }),
});

export const SessionRef = builder.objectRef<SessionRow>('Session');
export const NodeRef = builder.objectRef<NodeItem>('BrowserNode');
export const ProjectRef = builder.objectRef<ProjectView>('Project');

SessionRef.implement({
  description: 'A browser session as the operator sees it. Connection secrets (connectUrl, signingKey) are never exposed here.',
  fields: (t) => ({
    id: t.exposeID('id'),
    projectId: t.exposeString('projectId'),
    status: t.field({ type: SessionStatusEnum, resolve: (s) => toSdkStatus(InternalStatus.parse(s.status), s.endReason) }),
    internalStatus: t.field({ type: InternalStatusEnum, resolve: (s) => InternalStatus.parse(s.status) }),
    endReason: t.field({ type: EndReasonEnum, nullable: true, resolve: (s) => EndReason.safeParse(s.endReason).data ?? null }),
    errorMessage: t.exposeString('errorMessage', { nullable: true }),
    keepAlive: t.exposeBoolean('keepAlive'),
    region: t.exposeString('region'),
    timeout: t.exposeInt('timeout', { description: 'Seconds.' }),
    userMetadata: t.field({ type: 'JSON', resolve: (s) => s.userMetadata ?? {} }),
    browserSettings: t.field({ type: 'JSON', resolve: (s) => s.browserSettings ?? {} }),
    contextId: t.exposeString('contextId', { nullable: true }),
    nodeId: t.exposeString('nodeId', { nullable: true }),
    publicIp: t.exposeString('publicIp', { nullable: true }),
    createdAt: t.string({ resolve: (s) => s.createdAt.toISOString() }),
    updatedAt: t.string({ resolve: (s) => s.updatedAt.toISOString() }),
    startedAt: t.string({ nullable: true, resolve: (s) => iso(s.startedAt) }),
    endedAt: t.string({ nullable: true, resolve: (s) => iso(s.endedAt) }),
    expiresAt: t.string({ description: 'When the timeout ends the session (and the record is removed after).', resolve: (s) => new Date(Number(s.expiresAt) * 1000).toISOString() }),
    live: t.boolean({ description: 'Not ended yet (the browser may be attached to).', resolve: (s) => s.endedAt === null }),
  }),
});

NodeRef.implement({
  description: 'A browser node: capacity, what runs on it and whether it is healthy.',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.string({ resolve: (n) => n.row.name }),
    status: t.field({ type: NodeStatusEnum, resolve: (n) => n.status }),
    healthy: t.boolean({ description: 'UP, and (for standalone agents) heartbeating.', resolve: (n) => n.healthy }),
    publicHost: t.exposeString('publicHost'),
    cdpPort: t.int({ resolve: (n) => n.row.cdpPort }),
    webdriverPort: t.int({ nullable: true, resolve: (n) => n.row.webdriverPort }),
    tls: t.boolean({ resolve: (n) => n.row.tls }),
    capacity: t.exposeInt('capacity'),
    running: t.exposeInt('running', { description: 'Live sessions placed on this node.' }),
    free: t.int({ resolve: (n) => Math.max(0, n.capacity - n.running) }),
    lastSeenAt: t.string({ resolve: (n) => n.row.lastSeenAt.toISOString() }),
    lastHeartbeatAt: t.exposeString('lastHeartbeatAt', { nullable: true, description: 'Null for the in-process local node, which never heartbeats.' }),
    nomadNodeId: t.exposeString('nomadNodeId', { nullable: true }),
    createdAt: t.string({ resolve: (n) => n.row.createdAt.toISOString() }),
  }),
});

export const UsageRef = builder.objectRef<Usage>('Usage').implement({
  description: 'Browser minutes (running sessions count up to now) and proxied bytes.',
  fields: (t) => ({
    browserMinutes: t.exposeFloat('browserMinutes'),
    proxyBytes: t.exposeFloat('proxyBytes', { description: 'Bytes (a Float: may exceed 32 bits).' }),
  }),
});

export const UsagePointRef = builder.objectRef<UsagePoint>('UsagePoint').implement({
  description: 'Browser minutes spent within one hour or day (UTC), from the Usage table.',
  fields: (t) => ({
    at: t.exposeString('at', { description: 'Start of the bucket, ISO 8601.' }),
    browserMinutes: t.exposeFloat('browserMinutes'),
  }),
});

export type ApiKeyView = Awaited<ReturnType<typeof listApiKeys>>[number];
export const ApiKeyRef = builder.objectRef<ApiKeyView>('ApiKey').implement({
  description: 'An API key; only its prefix is kept in readable form.',
  fields: (t) => ({
    id: t.exposeID('id'),
    prefix: t.exposeString('prefix'),
    createdAt: t.exposeString('createdAt'),
    revokedAt: t.exposeString('revokedAt', { nullable: true }),
    projectIds: t.exposeStringList('projectIds'),
  }),
});

export const CreatedApiKeyRef = builder.objectRef<{ id: string; key: string; projectIds: string[] }>('CreatedApiKey').implement({
  description: 'A new API key: `key` is shown this once and never again.',
  fields: (t) => ({
    id: t.exposeID('id'),
    key: t.exposeString('key'),
    projectIds: t.exposeStringList('projectIds'),
  }),
});

export const SettingsMetaRef = builder.objectRef<SettingsMeta>('SettingsMeta').implement({
  description: 'Control data of the settings: the version and the save/apply status.',
  fields: (t) => ({
    updatedAt: t.exposeString('updatedAt', { description: 'The version (updated_at of the settings row); send it back as expectedUpdatedAt.' }),
    saveAppliedToRuntime: t.exposeBoolean('saveAppliedToRuntime'),
    saveApplyError: t.exposeString('saveApplyError', { nullable: true }),
  }),
});

export const SettingsRef = builder.objectRef<SettingsEnvelope>('Settings').implement({
  description: 'The settings envelope of GET /api/settings: four layers, kept apart.',
  fields: (t) => ({
    intent: t.field({ type: 'JSON', description: 'Persisted operator-authored snapshot.', resolve: (s) => s.intent }),
    effective: t.field({ type: 'JSON', description: 'Normalized runtime settings (what the runtime reads).', resolve: (s) => s.effective }),
    bindings: t.field({ type: 'JSON', description: 'Derived helpers for display; never persisted.', resolve: (s) => s.bindings }),
    _meta: t.field({ type: SettingsMetaRef, resolve: (s) => s._meta }),
  }),
});

export const SaveSettingsResultRef = builder.objectRef<{ saved: boolean; message: string | null; settings: SettingsEnvelope }>('SaveSettingsResult').implement({
  description: 'A save: `saved` false when the settings changed since expectedUpdatedAt; `settings` is then the current envelope.',
  fields: (t) => ({
    saved: t.exposeBoolean('saved'),
    message: t.exposeString('message', { nullable: true }),
    settings: t.field({ type: SettingsRef, resolve: (r) => r.settings }),
  }),
});

export const PublicHttpsRef = builder.objectRef<PublicHttpsState>('PublicHttps').implement({
  description: 'The public HTTPS entrypoint (GET /api/public-https).',
  fields: (t) => ({
    enabled: t.exposeBoolean('enabled'),
    provider: t.exposeString('provider'),
    status: t.field({ type: PublicHttpsStatusEnum, resolve: (p) => p.status }),
    targetUrl: t.exposeString('targetUrl'),
    publicUrl: t.exposeString('publicUrl', { description: 'Empty until discovered.' }),
    host: t.string({ description: 'The host of publicUrl; empty until discovered.', resolve: (p) => hostOf(p.publicUrl) }),
    pid: t.exposeInt('pid'),
    startedAt: t.exposeString('startedAt'),
    lastError: t.exposeString('lastError'),
  }),
});

export const ShareLinkRef = builder.objectRef<ShareCreated>('ShareLink').implement({
  description: 'A live-view share: /share/:token shows the browser; its frames stream from /share/:token/frames.',
  fields: (t) => ({
    token: t.exposeString('token'),
    url: t.exposeString('url'),
    publicUrl: t.exposeString('publicUrl', { nullable: true }),
    sessionId: t.exposeString('sessionId'),
    expiresAt: t.exposeString('expiresAt'),
  }),
});

export function hostOf(url: string): string {
  try {
    return url ? new URL(url).host : '';
  } catch {
    return '';
  }
}

export type { NodeView };
