// `caravan node-token --node <id>`: a node credential for an agent that is given one
// (CARAVAN_NODE_TOKEN) instead of signing its own. Signed with the control plane's secret.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config.ts';
import { NodeId } from '../../schema/node.ts';
import { envSecret } from './secret.ts';
import { signNodeToken } from './tokens.ts';

export async function nodeTokenFromConfig(config: Config, nodeId: string): Promise<string> {
  const id = NodeId.safeParse(nodeId);
  if (!id.success) throw new Error(`--node: ${id.error.issues[0]?.message ?? 'invalid node id'}`);
  let key = config.SERVICE_JWT_SIGNING_KEY;
  if (!key) {
    // Only a secret that already exists: a new one would sign tokens nobody verifies.
    const file = path.join(config.dataDir, 'jwt-secret');
    key = await fs.readFile(file, 'utf8').then((s) => s.trim(), () => undefined);
    if (!key) throw new Error(`no signing key: set SERVICE_JWT_SIGNING_KEY (or run where ${file} exists)`);
  }
  return signNodeToken(envSecret(key), id.data);
}
