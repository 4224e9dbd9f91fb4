import { screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { ANALYSIS, EMPTY_ANALYSIS } from "../../test/analysisFixtures";
import { UNKNOWN_ANALYSIS, panel, renderPanel, type PanelOf } from "./panelTesting";
import { RttModesPanel } from "./RttModesPanel";

const TITLE = "RTT modes";
const modes: PanelOf = (analysis, choices) => (
  <RttModesPanel analysis={analysis} verdicts={choices?.rtt_mode_verdict} />
);

describe("RttModesPanel", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it("lists RTT modes with their traceroute paths and ceilings", async () => {
    renderPanel(modes);
    const section = panel(TITLE);
    const verdict = await within(section).findByText("Bimodal RTT (ECMP)");
    expect(verdict.style.backgroundColor).toBe("rgb(188, 76, 0)");
    expect(within(section).getByText("10.0.0.1 → 10.1.0.1 → 10.2.0.2")).toBeDefined();
    const rows = within(section).getAllByRole("row");
    expect(rows[2]?.textContent).toContain("—");
    expect(rows[2]?.textContent).toContain("2.1 Gbit/s (Receive window)");
    expect(rows[1]?.textContent).toContain("62.5 %");
    expect(within(section).getByText("a candidate for a second RTT mode")).toBeDefined();
    expect(within(section).queryByTestId("time-modes")).toBeNull();
  });

  it("says why an ECMP sweep's modes stand when newer sweeps saw one mode", async () => {
    const choice = "ECMP modes (7.80, 11.90 ms) of the sweep at 2026-11-22T11:00:00+00:00 still stand";
    renderPanel(modes, { ...ANALYSIS, modes: { ...ANALYSIS.modes, held_by_sweeps: 1, choice } });
    const section = panel(TITLE);
    expect(await within(section).findByText(/^modes of the sweep /)).toBeDefined();
    expect(within(section).getByText(choice)).toBeDefined();
  });

  it("says what to do without a flow sweep", async () => {
    renderPanel(modes, EMPTY_ANALYSIS);
    const section = panel(TITLE);
    expect(await within(section).findByText("Too little data")).toBeDefined();
    expect(within(section).getByText(/No RTT modes to show/).textContent).toContain("flowsweep");
  });

  it("shows a mode without a ceiling and says how the base RTT moved over time", async () => {
    renderPanel(modes, UNKNOWN_ANALYSIS);
    const section = panel(TITLE);
    expect((await within(section).findByTestId("time-modes")).textContent).toBe(
      "Over time the base RTT moved between levels (a route change): 7.90 ms → 12.10 ms, changing at " +
        "2026-11-22 09:30:00 UTC. base RTT stepped once",
    );
    expect(within(section).getAllByRole("row")[1]?.textContent).toContain("—");
    expect(screen.queryByText(/failed to render/)).toBeNull();
  });

  it("says it is loading, then why it failed", async () => {
    renderPanel(modes, 500);
    expect(screen.getByRole("status").textContent).toBe("Loading the RTT modes…");
    expect(await screen.findByText("Could not load the RTT modes: server error.")).toBeDefined();
  });
});
