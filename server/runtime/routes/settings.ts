// /api/settings routes: read, save (compare-and-swap), preset preview, refresh. Never cached.
import { getSettings } from '../settings/getSettings.ts';
import { previewPresetDefaults } from '../settings/previewPresetDefaults.ts';
import { refreshSettings } from '../settings/refreshSettings.ts';
import { saveSettings, StaleSettings } from '../settings/saveSettings.ts';
import type { RuntimeRoute } from './route.ts';

export const settingsRoutes: RuntimeRoute[] = [
  {
    method: 'GET', url: '/api/settings', access: 'admin',
    handler: ({ rt }) => getSettings(rt.settings),
  },
  {
    method: 'PUT', url: '/api/settings', access: 'admin',
    handler: async ({ rt, req, reply }) => {
      try {
        return await saveSettings(rt.settings, req.body);
      } catch (err) {
        if (!(err instanceof StaleSettings)) throw err;
        return reply.code(409).send({ success: false, message: err.message, ...err.current });
      }
    },
  },
  {
    method: 'POST', url: '/api/settings/preset-defaults', access: 'admin',
    handler: ({ rt, req }) => previewPresetDefaults(rt.settings, req.body),
  },
  {
    method: 'POST', url: '/api/settings/refresh', access: 'admin',
    handler: ({ rt }) => refreshSettings(rt.settings),
  },
];
