/** Builds the web console into web/dist, which vdb serves at / (src/server/console.ts). */
import { defineConfig } from 'vite';

export default defineConfig({
  // Relative asset paths: the console works wherever vdb's root is mounted.
  base: './',
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 1000 },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
});
