// Presets selected by agentStack.preset: partial authored settings that seed every value the
// operator left unset. Authored values always win; removing an override returns the field to
// the preset's value.
import type { PresetName } from './groups.ts';

export type PresetDefaults = Readonly<Record<string, unknown>>;

export const PRESETS: Record<PresetName, { label: string; defaults: PresetDefaults }> = {
  balanced: { label: 'Balanced: the built-in defaults', defaults: {} },
  scraping: {
    label: 'Scraping: short sessions, ad blocking, a thrifty live view',
    defaults: {
      interaction: { sessionDefaults: { timeoutSeconds: 120, keepAlive: false } },
      agentStack: { runtimeConfig: { browser: { blockAds: true } } },
      media: { liveView: { jpegQuality: 40, maxFps: 2 } },
    },
  },
  agent: {
    label: 'Agent: long kept-alive sessions, more tool steps, memory on',
    defaults: {
      interaction: { sessionDefaults: { timeoutSeconds: 1800, keepAlive: true }, replyBudget: { maxToolSteps: 50 } },
      memory: { enabled: true },
      memoryLlm: { provider: 'provider-a-oauth' },
    },
  },
  qa: {
    label: 'QA: watchable sessions, sharp and smooth live view, long share links',
    defaults: {
      interaction: { sessionDefaults: { timeoutSeconds: 600 } },
      media: { liveView: { jpegQuality: 80, maxFps: 10 } },
      voice: { shareSessions: { ttlMinutes: 30 } },
    },
  },
};
