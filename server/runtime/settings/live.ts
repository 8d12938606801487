// The live runtime's view of the settings: the effective settings it currently runs on, which
// saved version they came from, and the consumers that re-read them when they are applied.
import { normalizeSettings, type RuntimeSettings } from '../../../schema/settings/settings.ts';

export type SettingsConsumer = (effective: RuntimeSettings) => void | Promise<void>;

export interface ApplyResult {
  applied: boolean;
  error: string | null;
}

export interface LiveSettings {
  /** What the runtime reads: the effective settings last applied. */
  current(): RuntimeSettings;
  /** The saved version last applied, and how that went. */
  status(): { version: string | undefined; error: string | null };
  /** Makes `effective` current and lets every consumer reconcile; errors are collected. */
  apply(effective: RuntimeSettings, version: string): Promise<ApplyResult>;
  /** Registers a consumer; returns the unregister function. */
  onApply(consumer: SettingsConsumer, name: string): () => void;
}

export function liveSettings(): LiveSettings {
  let effective = normalizeSettings({});
  let version: string | undefined;
  let lastError: string | null = null;
  const consumers = new Map<SettingsConsumer, string>();
  // Applies are serialized so that a slow consumer never sees an older snapshot after a newer one.
  let queue: Promise<unknown> = Promise.resolve();
  return {
    current: () => effective,
    status: () => ({ version, error: lastError }),
    apply(next, nextVersion) {
      const run = async (): Promise<ApplyResult> => {
        effective = next;
        version = nextVersion;
        const errors: string[] = [];
        for (const [consumer, name] of consumers) {
          try {
            await consumer(next);
          } catch (err) {
            errors.push(`${name}: ${(err as Error).message}`);
          }
        }
        lastError = errors.length ? errors.join('; ') : null;
        return { applied: errors.length === 0, error: lastError };
      };
      const p = queue.then(run, run);
      queue = p.catch(() => undefined);
      return p;
    },
    onApply(consumer, name) {
      consumers.set(consumer, name);
      return () => consumers.delete(consumer);
    },
  };
}
