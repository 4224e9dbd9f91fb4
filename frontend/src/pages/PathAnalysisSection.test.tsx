// The analysis section as the path page shows it: one request feeds six panels, each loading
// and failing on its own. What each panel says is tested next to it, in path/.
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen, within } from "@testing-library/react";
import { MemoryRouter, Route, Routes } from "react-router-dom";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { PathHistory } from "../lib/historyFigure";
import { ANALYSIS, CHOICES, DESTINATION, SOURCE } from "../test/analysisFixtures";
import { mockApi, requestedUrls, type ApiRoutes } from "../test/mockApi";
import { ANALYSIS_PATH, UNKNOWN_ANALYSIS, panel } from "./path/panelTesting";
import { PathPage } from "./PathPage";

const HISTORY: PathHistory = {
  source: SOURCE,
  destination: DESTINATION,
  family: 4,
  resolution: "minute",
  bucket_s: 60,
  from: "2026-11-22T11:00:00Z",
  to: "2026-11-22T12:00:00Z",
  rtt: [],
  throughput: [],
  reverse: { rtt: [], throughput: [] },
};

/** Each panel's title and the words of its loading and error states. */
const PANELS = [
  ["Throughput against its ceilings", "the throughput runs"],
  ["What limits this path", "the diagnosis"],
  ["RTT modes", "the RTT modes"],
  ["Advice", "the advice"],
  ["Capacity plan", "the capacity plan"],
  ["Findings", "the findings"],
] as const;

function renderPath(overrides: ApiRoutes = {}) {
  const fetchMock = mockApi({
    "/api/v1/choices/": CHOICES,
    "/api/v1/paths/history/": HISTORY,
    "/api/v1/paths/runs/": [],
    "/api/v1/paths/routes/": { ...HISTORY, start: HISTORY.from, end: HISTORY.to, routes: [], runs: [], changes: [], truncated: false },
    "/api/v1/analysis/findings/": [],
    [ANALYSIS_PATH]: ANALYSIS,
    ...overrides,
  });
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={queryClient}>
      <MemoryRouter initialEntries={[`/paths/${SOURCE.id}/${DESTINATION.id}`]}>
        <Routes>
          <Route path="/paths/:source/:destination" element={<PathPage />} />
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>,
  );
  return fetchMock;
}

/** The analysis panels, which the page shows once the history has answered. */
async function analysisShown(): Promise<void> {
  await screen.findByRole("region", { name: "Analysis" });
}

describe("PathPage analysis", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it("feeds every panel from one request for the path, below the history chart", async () => {
    const fetchMock = renderPath();
    await screen.findByTestId("ceiling-chart");
    const section = screen.getByRole("region", { name: "Analysis" });
    expect(within(section).getAllByRole("region").map((region) => region.querySelector("h2")?.textContent)).toEqual(
      PANELS.map(([title]) => title),
    );
    const requests = requestedUrls(fetchMock, ANALYSIS_PATH);
    expect(requests).toHaveLength(1);
    expect(requests[0]?.searchParams.get("source")).toBe(SOURCE.id);
    expect(requests[0]?.searchParams.get("destination")).toBe(DESTINATION.id);
    expect(requests[0]?.searchParams.has("goal_bps")).toBe(false);
    // The history part still renders above it.
    expect(await screen.findByTestId("history-empty")).toBeDefined();
  });

  it("shows each panel's loading state until the analysis arrives", async () => {
    let release: (body: unknown) => void = () => undefined;
    renderPath({ [ANALYSIS_PATH]: new Promise((resolve) => (release = resolve)) });
    await analysisShown();
    for (const [title, what] of PANELS) {
      expect(within(panel(title)).getByRole("status").textContent).toBe(`Loading ${what}…`);
    }
    release(ANALYSIS);
    await screen.findByTestId("ceiling-chart");
    for (const [title] of PANELS) {
      expect(within(panel(title)).queryByRole("status")).toBeNull();
    }
  });

  it("asks again with the goal rate and daily volume the user types", async () => {
    const fetchMock = renderPath();
    await screen.findByTestId("ceiling-chart");
    fireEvent.change(within(panel("Advice")).getByLabelText(/Goal rate/), { target: { value: "25" } });
    fireEvent.click(within(panel("Advice")).getByRole("button", { name: "Apply" }));
    await vi.waitFor(() => {
      expect(requestedUrls(fetchMock, ANALYSIS_PATH).at(-1)?.searchParams.get("goal_bps")).toBe("25000000000");
    });
    fireEvent.change(within(panel("Capacity plan")).getByLabelText(/Daily volume/), { target: { value: "20" } });
    fireEvent.click(within(panel("Capacity plan")).getByRole("button", { name: "Apply" }));
    await vi.waitFor(() => {
      const last = requestedUrls(fetchMock, ANALYSIS_PATH).at(-1);
      expect(last?.searchParams.get("daily_volume_bytes")).toBe(String(20 * 2 ** 40));
      expect(last?.searchParams.get("goal_bps")).toBe("25000000000");
    });
  });

  it("survives every term unknown and runs without rate or evidence in every panel", async () => {
    renderPath({ [ANALYSIS_PATH]: UNKNOWN_ANALYSIS });
    await analysisShown();
    await within(panel("What limits this path")).findByText("Unknown");
    expect(screen.queryByText(/failed to render/)).toBeNull();
  });

  it("keeps the other panels readable when one fails to render", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    // A payload the types rule out, as an older backend could send it.
    renderPath({ [ANALYSIS_PATH]: { ...ANALYSIS, findings: null } });
    await analysisShown();
    const findings = panel("Findings");
    expect(await within(findings).findByText("The “Findings” panel failed to render")).toBeDefined();
    expect(within(panel("Advice")).getByText("4096 131072 31457280")).toBeDefined();
    expect(screen.getByTestId("ceiling-chart")).toBeDefined();
  });

  it("reports a failed analysis in each panel and keeps the history", async () => {
    renderPath({ [ANALYSIS_PATH]: 500 });
    await analysisShown();
    for (const [title, what] of PANELS) {
      expect(await within(panel(title)).findByText(`Could not load ${what}: server error.`)).toBeDefined();
    }
    expect(screen.getByTestId("history-empty")).toBeDefined();
    // The forms stay, so a bad goal can be changed back.
    expect(within(panel("Advice")).getByLabelText(/Goal rate/)).toBeDefined();
  });
});
