import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The dashboard: Preact pages built into dist/ui, served by the service itself
 * (same origin, no CDN). JSX is compiled for Preact by Vite's own transformer.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  // `npm run dev:ui` next to `npm start`: pages reload as they change, the API stays the service's.
  server: { proxy: { '/v1': 'http://127.0.0.1:3000', '/ui': 'http://127.0.0.1:3000', '/sandbox': 'http://127.0.0.1:3000' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/ui', import.meta.url)),
    emptyOutDir: true,
    // Small enough to inline nothing surprising; source maps help whoever debugs a page.
    sourcemap: true,
  },
});
