// The thirteen settings groups of the operator runtime (companion-runtime spec), each a lenient
// zod schema with its defaults. Which fields Caravan reads live is listed in docs/decisions.md.
import { z } from 'zod';
import { choice, flag, group, int, list, real, records, text } from './fields.ts';

// No node:path here: the dashboard imports these schemas too.
const ABSOLUTE_PATH = /^(\/|[A-Za-z]:[\\/])/;

export const PROVIDERS = ['provider-a-oauth', 'provider-b-oauth', 'api-key', 'none'] as const;
export const PRESET_NAMES = ['balanced', 'scraping', 'agent', 'qa'] as const;
export type PresetName = (typeof PRESET_NAMES)[number];

/** Model context and presentation: how this installation names itself. */
export const IdentitySettings = group({
  /** Shown on the share page and used as the local-network (mDNS) service name. */
  displayName: text('Caravan', 63),
  description: text(''),
});

export const PersonaSettings = group({
  tone: choice(['neutral', 'concise', 'friendly'] as const, 'neutral'),
  signature: text(''),
});

export const PromptingSettings = group({
  /** Prepended to instructions of API-mode agent calls. */
  systemPrompt: text('', 4000),
  extraInstructions: list(),
});

export const PermissionsSettings = group({
  devTasks: group({
    /** Approved local roots for code workers (absolute paths only). */
    allowedWorkspaceRoots: list([], (p) => ABSOLUTE_PATH.test(p)),
  }),
  liveView: group({
    /** Whether operators may create live-view share links. */
    allowSharing: flag(true),
  }),
  ingest: group({
    /** Whether the frame-ingest route accepts `x-public-api-token` (PUBLIC_API_TOKEN). */
    acceptPublicApiToken: flag(true),
  }),
});

export const InteractionSettings = group({
  /** Defaults for sessions started through API mode (`POST /sessions/start`). */
  sessionDefaults: group({
    timeoutSeconds: int(300, 60, 21600),
    keepAlive: flag(false),
    region: choice(['us-west-2', 'us-east-1', 'eu-central-1', 'ap-southeast-1'] as const, 'us-west-2'),
  }),
  replyBudget: group({
    maxOutputTokens: int(1024, 1, 32000),
    maxToolSteps: int(20, 1, 200),
  }),
  startup: group({
    /** Replay missed activity to a dashboard that reconnects. */
    catchUp: flag(true),
  }),
});

export const AgentStackSettings = group({
  preset: choice(PRESET_NAMES, 'balanced'),
  /** Model binding for API-mode agent calls. */
  provider: choice(PROVIDERS, 'provider-a-oauth'),
  model: text(''),
  runtimeFamilies: group({
    voice: choice(['realtime', 'pipeline', 'none'] as const, 'none'),
  }),
  runtimeConfig: group({
    browser: group({
      /** Block ads and trackers in API-mode sessions. */
      blockAds: flag(false),
      viewportWidth: int(1280, 320, 3840),
      viewportHeight: int(800, 240, 2160),
    }),
    devTeam: group({
      /** Unset: the first of permissions.devTasks.allowedWorkspaceRoots. */
      defaultWorkingDirectory: text(''),
      swarm: group({
        /** false: workers need attachable terminal sessions unless the operator allows headless fallback. */
        allowDirectChildFallback: flag(false),
        maxWorkers: int(2, 1, 16),
      }),
    }),
    gameRuntime: group({
      /** Preferred world/server target for embodied game sessions. */
      server: text(''),
    }),
  }),
});

export const MemorySettings = group({
  enabled: flag(false),
  retentionDays: int(30, 1, 3650),
  maxItems: int(1000, 0, 100000),
});

export const MemoryLlmSettings = group({
  provider: choice(PROVIDERS, 'none'),
  model: text(''),
  temperature: real(0.2, 0, 2),
});

export const InitiativeSettings = group({
  enabled: flag(false),
  textIntervalMinutes: int(60, 5, 10080),
  voiceIntervalMinutes: int(0, 0, 10080),
});

export const VoiceSettings = group({
  enabled: flag(false),
  admission: group({ maxConcurrent: int(4, 0, 64) }),
  transcription: group({
    provider: choice(PROVIDERS, 'none'),
    language: text('en', 16),
  }),
  /** Live-view share sessions (`/api/sessions/:id/share`, `/api/voice/share-session/...`). */
  shareSessions: group({
    ttlMinutes: int(12, 2, 30),
    maxActive: int(240, 1, 240),
  }),
  soundboard: group({ enabled: flag(false) }),
});

export const MediaSettings = group({
  /** The screencast behind a share link. */
  liveView: group({
    jpegQuality: int(60, 10, 100),
    maxWidth: int(1280, 160, 3840),
    maxHeight: int(800, 120, 2160),
    /** At most 15, so a share stays under the public frame routes' rate limit. */
    maxFps: int(5, 1, 15),
  }),
  vision: group({ enabled: flag(false) }),
});

export const MusicSettings = group({
  enabled: flag(false),
  duckingPercent: int(40, 0, 100),
});

export const AutomationJob = group({
  name: text('', 80),
  /** Five-field cron expression. */
  schedule: text('', 120),
  action: choice(['release-idle-sessions', 'purge-ended-records', 'webhook'] as const, 'webhook'),
  target: text(''),
  enabled: flag(true),
});

export const AutomationsSettings = group({
  enabled: flag(false),
  jobs: records(AutomationJob),
});

export const GROUPS = {
  identity: IdentitySettings,
  persona: PersonaSettings,
  prompting: PromptingSettings,
  permissions: PermissionsSettings,
  interaction: InteractionSettings,
  agentStack: AgentStackSettings,
  memory: MemorySettings,
  memoryLlm: MemoryLlmSettings,
  initiative: InitiativeSettings,
  voice: VoiceSettings,
  media: MediaSettings,
  music: MusicSettings,
  automations: AutomationsSettings,
} as const;

export const GROUP_NAMES = Object.keys(GROUPS) as Array<keyof typeof GROUPS>;

/** The normalized (effective) settings: every group, every field present. */
export const RuntimeSettings = group(GROUPS);
export type RuntimeSettings = z.output<typeof RuntimeSettings>;
