// Operator GraphQL for the runtime: the settings envelope and its save (the use cases behind
// GET and PUT /api/settings, same rules), the public entrypoint state, live-view share links
// (the runtime's share service), and a stream of settings versions so that an open form learns
// when someone else saved.
import { Repeater } from 'graphql-yoga';
import { ShareCreateBody } from '../../../schema/runtime.ts';
import { isPlainObject } from '../../../schema/settings/fields.ts';
import type { SettingsEnvelope } from '../../../schema/settings/settings.ts';
import { Invalid } from '../../errors.ts';
import { getSettings } from '../../runtime/settings/getSettings.ts';
import { saveSettings, StaleSettings } from '../../runtime/settings/saveSettings.ts';
import { builder } from '../builder.ts';
import { operatorOf } from './auth.ts';
import { PublicHttpsRef, SaveSettingsResultRef, SettingsRef, ShareLinkRef } from './types.ts';

/** Another replica's save is seen within this time (this process's own saves at once). */
export const SETTINGS_POLL_MS = 2_000;

builder.queryFields((t) => ({
  settings: t.field({
    type: SettingsRef,
    resolve: (_r, _a, ctx) => getSettings(operatorOf(ctx).settings),
  }),
  publicHttps: t.field({
    type: PublicHttpsRef,
    description: 'The public HTTPS entrypoint: state and URL (the dashboard\'s Public HTTPS card).',
    resolve: (_r, _a, ctx) => operatorOf(ctx).publicHttps.state(),
  }),
}));

builder.mutationFields((t) => ({
  saveSettings: t.field({
    type: SaveSettingsResultRef,
    description: 'Replaces the whole authored snapshot (not a merge) if expectedUpdatedAt is still the saved version, then applies it; as PUT /api/settings.',
    args: {
      intent: t.arg({ type: 'JSON', required: true, description: 'The full authored snapshot (the form sends its materialized settings).' }),
      expectedUpdatedAt: t.arg.string({ required: true, description: 'settings._meta.updatedAt of the settings the edit started from.' }),
    },
    resolve: async (_r, args, ctx) => {
      const rt = operatorOf(ctx);
      if (!isPlainObject(args.intent)) throw new Invalid('intent: send the settings snapshot as a JSON object of groups');
      try {
        return { saved: true, message: null, settings: await saveSettings(rt.settings, { intent: args.intent, _meta: { expectedUpdatedAt: args.expectedUpdatedAt } }) };
      } catch (err) {
        if (!(err instanceof StaleSettings)) throw err;
        return { saved: false, message: err.message, settings: err.current };
      }
    },
  }),
  createShareLink: t.field({
    type: ShareLinkRef,
    description: 'A live-view share of a running session (as POST /api/sessions/:id/share).',
    args: { sessionId: t.arg.id({ required: true }), ttlMinutes: t.arg.int({ description: '2..30; the settings\' default when absent.' }) },
    resolve: (_r, args, ctx) => {
      const rt = operatorOf(ctx);
      const body = ShareCreateBody.safeParse(args.ttlMinutes != null ? { ttlMinutes: args.ttlMinutes } : {});
      if (!body.success) throw new Invalid(`ttlMinutes: ${body.error.issues[0]?.message ?? 'must be 2..30'}`);
      return rt.shares.create(String(args.sessionId), body.data.ttlMinutes);
    },
  }),
}));

builder.subscriptionField('settingsChanged', (t) =>
  t.field({
    type: SettingsRef,
    description: 'The settings now, then again whenever the saved version changes.',
    subscribe: (_r, _a, ctx) => {
      const rt = operatorOf(ctx);
      return new Repeater<SettingsEnvelope>(async (push, stop) => {
        let version = '';
        let stopped = false;
        const check = async () => {
          const env = await getSettings(rt.settings);
          if (!stopped && env._meta.updatedAt !== version) {
            version = env._meta.updatedAt;
            await push(env);
          }
        };
        const run = () => void check().catch((err) => rt.log.warn({ err }, 'settings stream read failed'));
        // A save in this process applies at once; another replica's is found by the poll.
        const unregister = rt.settings.live.onApply(() => void setImmediate(run), 'dashboard settings stream');
        const timer = setInterval(run, SETTINGS_POLL_MS);
        await check().catch((err) => rt.log.warn({ err }, 'settings stream read failed'));
        await stop;
        stopped = true;
        unregister();
        clearInterval(timer);
      });
    },
    resolve: (env: SettingsEnvelope) => env,
  }),
);
