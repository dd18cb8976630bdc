/** Builds the web console into web/dist, which vdb serves at / (src/server/console.ts). */
import { defineConfig } from 'vite';

export default defineConfig({
  // Relative asset paths: the console works wherever vdb's root is mounted.
  base: './',
  // Fonts stay files (the content security policy allows no data: fonts).
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 1000, assetsInlineLimit: 0 },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
});
