import react from "@vitejs/plugin-react";
import { defineConfig } from "vitest/config";

// Django serves the build through whitenoise under /static/, so assets are based there;
// in development Vite proxies the API and the admin to `manage.py runserver`.
const backend = process.env.FATHOM_DEV_BACKEND ?? "http://127.0.0.1:8000";

export default defineConfig({
  base: "/static/",
  plugins: [react()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // Plotly's basic bundle (scatter and bar, all Fathom draws) is 1.15 MB minified, 380 KB
    // gzipped; it is loaded on demand by the chart component.
    chunkSizeWarningLimit: 1200,
  },
  server: {
    proxy: {
      "/api": backend,
      "/admin": backend,
    },
  },
  test: {
    // CI runs this suite on two cores beside the lab lane, where rendering a page and typing
    // into it took 5-7 s: vitest's 5 s default measured the machine, not the page.
    testTimeout: 30_000,
    projects: [
      // The pure modules need no DOM: a jsdom environment per file cost more than their tests.
      { extends: true, test: { name: "lib", environment: "node", include: ["src/lib/**/*.test.ts"] } },
      {
        extends: true,
        test: {
          name: "ui",
          environment: "jsdom",
          include: ["src/**/*.test.{ts,tsx}"],
          exclude: ["src/lib/**"],
          setupFiles: ["src/test/setup.ts"],
          // One jsdom and one module registry per worker, not per file: a fresh environment
          // per file was most of the suite's time (111 s against 28 s here). The tests
          // already leave nothing behind: render cleanup, a fresh QueryClient and fetch
          // stub per test.
          isolate: false,
        },
      },
    ],
  },
});
