import { cleanup, configure } from "@testing-library/react";
import { afterEach, vi } from "vitest";

// findBy and waitFor give up after 1 s by default; on CI's two cores beside the lab lane a
// render can take longer than that (see testTimeout in vite.config.ts).
configure({ asyncUtilTimeout: 10_000 });

// Plotly does not run in jsdom: every page test draws PlotlyChart as the list of its trace
// names. Here, not per file: the UI tests share one module registry (isolate: false in
// vite.config.ts), and a per-file mock would miss a page another file imported first.
vi.mock("../components/PlotlyChart", () => import("./plotlyChartStub"));

afterEach(() => {
  cleanup();
});
