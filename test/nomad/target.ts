// Which Nomad the suite talks to: the real one at NOMAD_ADDR (with NOMAD_TOKEN, NOMAD_NAMESPACE)
// when the environment names one (`nomad agent -dev`, raw_exec enabled), else the double.
import crypto from 'node:crypto';
import { nomadClient, type NomadClient } from '../../server/scheduler/nomad/client.ts';
import { startNomadDouble, type NomadDouble, type NomadDoubleOptions } from './double.ts';

export const REAL_NOMAD = process.env.NOMAD_ADDR || undefined;

export interface NomadTarget {
  addr: string;
  token?: string;
  namespace: string;
  /** Present when the suite runs against the double (double-only checks use it). */
  double?: NomadDouble;
  client: NomadClient;
  /** Job IDs unique to this run, so that runs and files never share jobs. */
  jobId(prefix: string): string;
  close(): Promise<void>;
}

export async function nomadTarget(doubleOptions: NomadDoubleOptions = {}): Promise<NomadTarget> {
  const namespace = process.env.NOMAD_NAMESPACE || 'default';
  const token = process.env.NOMAD_TOKEN || undefined;
  const double = REAL_NOMAD ? undefined : await startNomadDouble(doubleOptions);
  const addr = REAL_NOMAD ?? double!.url;
  return {
    addr,
    namespace,
    ...(token ? { token } : {}),
    ...(double ? { double } : {}),
    client: nomadClient({ addr, namespace, ...(token ? { token } : {}) }),
    jobId: (prefix) => `${prefix}-${crypto.randomBytes(4).toString('hex')}`,
    close: async () => {
      await double?.close();
    },
  };
}
