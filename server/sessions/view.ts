// Shapes a stored session into the SDK-visible object (spec field names and SDK status).
import { InternalStatus, toSdkStatus } from '../../schema/states.ts';
import type { SessionRow } from '../db/client.ts';

export interface SessionView {
  id: string;
  status: string;
  projectId: string;
  createdAt: string;
  updatedAt: string;
  startedAt: string;
  endedAt?: string;
  expiresAt: string;
  keepAlive: boolean;
  region: string;
  userMetadata: Record<string, unknown>;
  contextId?: string;
  proxyBytes: number;
  connectUrl?: string;
  seleniumRemoteUrl?: string;
  signingKey?: string;
  publicIp?: string;
  publicIP?: string;
  errorMessage?: string;
}

export function sessionView(row: SessionRow, proxyBytes: number, opts: { secrets: boolean }): SessionView {
  const v: SessionView = {
    id: row.id,
    status: toSdkStatus(InternalStatus.parse(row.status), row.endReason),
    projectId: row.projectId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    startedAt: row.createdAt.toISOString(),
    expiresAt: new Date(Number(row.expiresAt) * 1000).toISOString(),
    keepAlive: row.keepAlive,
    region: row.region,
    userMetadata: (row.userMetadata ?? {}) as Record<string, unknown>,
    proxyBytes,
  };
  if (row.endedAt) v.endedAt = row.endedAt.toISOString();
  if (row.contextId) v.contextId = row.contextId;
  if (row.errorMessage) v.errorMessage = row.errorMessage;
  if (opts.secrets) {
    if (row.connectUrl) v.connectUrl = row.connectUrl;
    if (row.seleniumRemoteUrl) v.seleniumRemoteUrl = row.seleniumRemoteUrl;
    v.signingKey = row.signingKey;
  }
  if (row.publicIp) {
    v.publicIp = row.publicIp;
    v.publicIP = row.publicIp;
  }
  return v;
}
