// Vite builds the web view into ui/dist, which tauri.conf.json embeds (no dev server, no
// remote content). Vitest runs the unit tests under jsdom.
import { defineConfig } from "vitest/config";

export default defineConfig({
  root: __dirname,
  base: "./",
  build: { outDir: "dist", emptyOutDir: true, target: "es2022" },
  test: { environment: "jsdom", include: ["src/**/*.test.ts"] },
});
