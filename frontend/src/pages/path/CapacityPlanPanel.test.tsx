import { fireEvent, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { ANALYSIS, EMPTY_ANALYSIS } from "../../test/analysisFixtures";
import { CapacityPlanPanel } from "./CapacityPlanPanel";
import { panel, renderPanel, type PanelOf } from "./panelTesting";

const TITLE = "Capacity plan";

function plan(onDailyVolume: (bytes: number | null) => void = vi.fn()): PanelOf {
  return (analysis) => <CapacityPlanPanel analysis={analysis} onDailyVolume={onDailyVolume} />;
}

describe("CapacityPlanPanel", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it("says whether the daily volume fits, in how many hours", async () => {
    renderPanel(plan());
    const section = panel(TITLE);
    expect(await within(section).findByText("10.2 h")).toBeDefined();
    expect(within(section).getByText("no")).toBeDefined();
    expect(within(section).getByText("1.3 Gbit/s")).toBeDefined();
    expect(within(section).getByText(/it takes 10.2 h a day: the volume fits/)).toBeDefined();
    expect(section.querySelector("dl.figures")?.textContent).not.toContain("Shared by all streams");
  });

  it("says what all streams share, and leaves it out when unknown", async () => {
    const policed = {
      ...ANALYSIS.capacity_plan,
      rate_bps: 62e6,
      per_stream_bps: 62e6,
      streams_needed: 2,
      backlog_grows: true,
      shared_ceiling_bps: 90e6,
      reason: "no number of streams keeps up: the policer (about 90.0 Mbit/s, an estimate) carries at most 90.0 Mbit/s",
      notes: ["streams add up only while each has its own limit"],
    };
    renderPanel(plan(), { ...ANALYSIS, capacity_plan: policed });
    const section = panel(TITLE);
    expect(await within(section).findByText(/no number of streams keeps up/)).toBeDefined();
    expect(section.querySelector("dl.figures")?.textContent).toContain("Shared by all streams90 Mbit/s");
    expect(within(section).getByText("streams add up only while each has its own limit")).toBeDefined();
  });

  it("says a starved path's hours a day in days too", async () => {
    const starved = { ...ANALYSIS.capacity_plan, hours_per_day: 127055.4, backlog_grows: true };
    renderPanel(plan(), { ...ANALYSIS, capacity_plan: starved });
    const hours = await within(panel(TITLE)).findByText("127,055 h (5,294 days)");
    expect(hours.className).toBe("flag");
  });

  it("flags a growing backlog", async () => {
    renderPanel(plan(), { ...ANALYSIS, capacity_plan: { ...ANALYSIS.capacity_plan, backlog_grows: true } });
    const grows = await within(panel(TITLE)).findByText("yes");
    expect(grows.className).toBe("flag");
  });

  it("hands a typed volume up in bytes", async () => {
    const onDailyVolume = vi.fn();
    renderPanel(plan(onDailyVolume));
    const section = panel(TITLE);
    await within(section).findByText("10.2 h");
    fireEvent.change(within(section).getByLabelText(/Daily volume/), { target: { value: "20" } });
    fireEvent.click(within(section).getByRole("button", { name: "Apply" }));
    expect(onDailyVolume).toHaveBeenCalledWith(20 * 2 ** 40);
  });

  it("says what is missing on a path with nothing measured", async () => {
    renderPanel(plan(), EMPTY_ANALYSIS);
    const section = panel(TITLE);
    expect(await within(section).findByText("no throughput measured yet")).toBeDefined();
    expect(within(section).getByText(/No throughput run analysed yet/)).toBeDefined();
  });

  it("keeps the volume form while it loads and after it failed", async () => {
    renderPanel(plan(), 500);
    expect(screen.getByRole("status").textContent).toBe("Loading the capacity plan…");
    expect(await screen.findByText("Could not load the capacity plan: server error.")).toBeDefined();
    expect(within(panel(TITLE)).getByLabelText(/Daily volume/)).toBeDefined();
  });
});
