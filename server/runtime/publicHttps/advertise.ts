// Local-network advertisement of the dashboard for the mobile app: an mDNS `_caravan._tcp`
// service whose TXT record carries the tunnel URL. Behind an interface so that tests can
// record what would be advertised without multicast.
import { Bonjour, type Service } from 'bonjour-service';
import type { Logger } from 'pino';

export const SERVICE_TYPE = 'caravan';

export interface Advertisement {
  /** Instance name, e.g. "Caravan". */
  name: string;
  /** The dashboard's local port. */
  port: number;
  /** Only `tunnelUrl` (never a token). */
  txt: { tunnelUrl: string };
}

export interface Advertiser {
  publish(ad: Advertisement): Promise<void>;
  unpublish(): Promise<void>;
  close(): Promise<void>;
}

/** mDNS through bonjour-service. The multicast socket is opened on the first publish only. */
export function mdnsAdvertiser(log: Logger): Advertiser {
  let bonjour: Bonjour | undefined;
  let service: Service | undefined;
  const stopService = () =>
    new Promise<void>((resolve) => {
      const s = service;
      service = undefined;
      if (!s) return resolve();
      s.stop?.(() => resolve());
      setTimeout(resolve, 1000).unref();
    });
  return {
    async publish(ad) {
      await stopService();
      bonjour ??= new Bonjour({}, (err: unknown) => log.warn({ err }, 'mDNS advertisement failed'));
      service = bonjour.publish({ name: ad.name, type: SERVICE_TYPE, protocol: 'tcp', port: ad.port, txt: { ...ad.txt } });
      service.on('error', (err: unknown) => log.warn({ err }, 'mDNS advertisement failed'));
      log.info({ type: `_${SERVICE_TYPE}._tcp`, name: ad.name, port: ad.port }, 'advertising the dashboard on the local network');
    },
    unpublish: stopService,
    async close() {
      await stopService();
      const b = bonjour;
      bonjour = undefined;
      if (b) await new Promise<void>((resolve) => b.destroy(() => resolve()));
    },
  };
}

/** Keeps what was published in memory (tests, and installations without multicast). */
export function recordingAdvertiser(): Advertiser & { current: Advertisement | undefined; history: Array<Advertisement | null> } {
  const rec = {
    current: undefined as Advertisement | undefined,
    history: [] as Array<Advertisement | null>,
    async publish(ad: Advertisement) {
      rec.current = ad;
      rec.history.push(ad);
    },
    async unpublish() {
      if (rec.current) rec.history.push(null);
      rec.current = undefined;
    },
    async close() {
      await rec.unpublish();
    },
  };
  return rec;
}
