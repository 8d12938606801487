// Builds the dashboard into web/dist (served by the control plane at /, server/web.ts).
// `npm run dev:web` serves it with hot reload and forwards the APIs to a local control plane.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));
const target = process.env.CARAVAN_URL ?? 'http://127.0.0.1:8420';

export default defineConfig({
  root,
  plugins: [react()],
  logLevel: 'warn',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No source maps in the shipped build; the sources are in the repository.
    sourcemap: false,
    chunkSizeWarningLimit: 800,
  },
  server: {
    proxy: {
      '/graphql': { target, ws: true },
      '/api': target,
      '/share': target,
    },
  },
});
