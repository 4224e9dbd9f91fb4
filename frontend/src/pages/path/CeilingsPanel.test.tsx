import { screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { EMPTY_ANALYSIS } from "../../test/analysisFixtures";
import { CeilingsPanel } from "./CeilingsPanel";
import { UNKNOWN_ANALYSIS, renderPanel, type PanelOf } from "./panelTesting";

const ceilings: PanelOf = (analysis, choices) => <CeilingsPanel analysis={analysis} diagnoses={choices?.diagnosis} />;

function traceNames(chart: HTMLElement): (string | null)[] {
  return within(chart)
    .queryAllByRole("listitem")
    .map((item) => item.textContent);
}

describe("CeilingsPanel", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it("charts runs against a ceiling line per RTT mode, coloured by the server's diagnoses", async () => {
    renderPanel(ceilings);
    await screen.findByText("Receive window limited");
    expect(traceNames(screen.getByTestId("ceiling-chart"))).toEqual([
      "ceiling of each run",
      "mode 1: 7.9 ms -> 3.2 Gbit/s",
      "mode 2: 12.1 ms -> 2.1 Gbit/s",
      "Receive window limited",
      "Capacity limited",
    ]);
    expect(screen.getByText(/The last 2 throughput runs/)).toBeDefined();
  });

  it("says what to do on a path with nothing measured", async () => {
    renderPanel(ceilings, EMPTY_ANALYSIS);
    const empty = await screen.findByTestId("ceiling-empty");
    expect(empty.textContent).toContain("No throughput run analysed yet: the default mesh runs one every 6 h");
    expect(screen.queryByTestId("ceiling-chart")).toBeNull();
  });

  it("draws nothing for a run without a rate, and does not fail", async () => {
    renderPanel(ceilings, UNKNOWN_ANALYSIS);
    expect(traceNames(await screen.findByTestId("ceiling-chart"))).toHaveLength(0);
    expect(screen.queryByText(/failed to render/)).toBeNull();
  });

  it("says it is loading, then why it failed", async () => {
    renderPanel(ceilings, 500);
    expect(screen.getByRole("status").textContent).toBe("Loading the throughput runs…");
    expect(await screen.findByText("Could not load the throughput runs: server error.")).toBeDefined();
  });
});
