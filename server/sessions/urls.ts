// Builds the URLs a client connects with from the node that holds the session's browser.
import { seleniumRemoteUrl } from '../../agent/proxy/webdriver.ts';

export interface NodeAddress {
  publicHost: string;
  cdpPort: number;
  webdriverPort: number | null;
  tls: boolean;
}

const hostPart = (h: string) => (h.includes(':') && !h.startsWith('[') ? `[${h}]` : h);

export function proxyBase(node: NodeAddress): { ws: string; http: string } {
  const hp = `${hostPart(node.publicHost)}:${node.cdpPort}`;
  return node.tls ? { ws: `wss://${hp}`, http: `https://${hp}` } : { ws: `ws://${hp}`, http: `http://${hp}` };
}

export function signCdpUrl(node: NodeAddress, token: string): { connectUrl: string; seleniumRemoteUrl: string | null } {
  return {
    connectUrl: `${proxyBase(node).ws}?signingKey=${token}`,
    seleniumRemoteUrl: node.webdriverPort ? seleniumRemoteUrl(node.publicHost, node.webdriverPort, token, node.tls) : null,
  };
}
