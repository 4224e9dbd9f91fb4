import { screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { ANALYSIS, EMPTY_ANALYSIS, RW_EVIDENCE, SLOW_MEMBER_RUN } from "../../test/analysisFixtures";
import { LimitPanel } from "./LimitPanel";
import { UNKNOWN_ANALYSIS, panel, renderPanel, type PanelOf } from "./panelTesting";

const TITLE = "What limits this path";
const limit: PanelOf = (analysis, choices) => <LimitPanel analysis={analysis} diagnoses={choices?.diagnosis} />;

describe("LimitPanel", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it("says what limits the path: server-coloured diagnosis, evidence and the winning term", async () => {
    renderPanel(limit);
    const limits = panel(TITLE);
    const badges = await within(limits).findAllByText("Receive window limited");
    expect(badges).toHaveLength(2); // the path's label and the newest run's
    expect(badges[1]?.style.backgroundColor).toBe("rgb(188, 76, 0)");
    for (const sentence of RW_EVIDENCE) {
      expect(within(limits).getByText(sentence)).toBeDefined();
    }
    expect(within(limits).getByText("97.0 %")).toBeDefined();
    const winning = limits.querySelector("tr.winning");
    expect(winning?.getAttribute("data-term")).toBe("receive_window");
    expect(winning?.textContent).toContain("limits");
    expect(
      within(limits).getByText("unknown — no loss measured: the loss ceiling has no finite bound"),
    ).toBeDefined();
    expect(within(limits).getByText("kernel 6.8 scaling_ratio (planning value 0.5)")).toBeDefined();
    expect(within(limits).getByText("6 MiB")).toBeDefined();
  });

  it("formats rates and term rates with the one rate formatter", async () => {
    renderPanel(limit);
    const limits = panel(TITLE);
    await within(limits).findAllByText("Receive window limited");
    const figures = limits.querySelector("dl.figures")?.textContent;
    expect(figures).toContain("Rate3.1 Gbit/s");
    expect(figures).toContain("Ceiling3.2 Gbit/s");
    expect(limits.querySelector('tr[data-term="link"]')?.textContent).toContain("9.5 Gbit/s");
  });

  it("shows the path's label as the consensus of its recent runs, beside the newest run's", async () => {
    renderPanel(limit, {
      ...ANALYSIS,
      path_label: { diagnosis: "capacity", agreeing_runs: 9, runs: 11, share: 9 / 11, summary: "capacity (9 of 11 runs)" },
    });
    const limits = panel(TITLE);
    await within(limits).findByText("Capacity limited");
    const label = limits.querySelector("p.path-label");
    expect(label?.textContent).toBe("This path: Capacity limited 9 of 11 recent runs (81.8 %)");
    expect(within(limits).getByText("Receive window limited")).toBeDefined();
  });

  it("says what one stream against several showed, and nothing without a probe", async () => {
    renderPanel(limit, {
      ...ANALYSIS,
      streams_probe: {
        run_id: "44444444-4444-4444-8444-444444444444",
        started_at: "2026-11-22T11:30:00Z",
        streams: 4,
        probe_bps: 31e6,
        single_bps: 8e6,
        single_runs: 10,
        ratio: 3.875,
        kind: "per_flow",
        text: "4 streams together reached 31.0 Mbit/s, 3.9x one stream's 8.0 Mbit/s: each flow is held on its own",
      },
    });
    const limits = panel(TITLE);
    await within(limits).findAllByText("Receive window limited");
    const line = limits.querySelector("p.streams-probe")?.textContent ?? "";
    expect(line).toContain("1 vs 4 streams: 4 streams together reached 31.0 Mbit/s, 3.9x one stream's 8.0 Mbit/s");
    expect(limits.querySelector("p.streams-probe")?.getAttribute("data-kind")).toBe("per_flow");
    expect(line).toContain("against 10 single-stream runs of the day before");
  });

  it("shows no label on a path whose runs have none", async () => {
    renderPanel(limit, { ...ANALYSIS, path_label: null });
    await within(panel(TITLE)).findByText("Receive window limited");
    expect(panel(TITLE).querySelector("p.path-label")).toBeNull();
    expect(panel(TITLE).querySelector("p.streams-probe")).toBeNull();
  });

  it("explains a run on a slower ECMP member against that member's ceiling, not as a drop", async () => {
    renderPanel(limit, { ...ANALYSIS, runs: [SLOW_MEMBER_RUN, ...ANALYSIS.runs] });
    const limits = panel(TITLE);
    const note = await within(limits).findByText(/on ECMP member 2 \(31 ms\): 94% of that member's ceiling/);
    expect(note.textContent).toContain("not as a drop");
    const figures = limits.querySelector("dl.figures")?.textContent;
    expect(figures).toContain("Ceiling of member 2745 Mbit/s");
    expect(figures).toContain("Share of member's ceiling94.0 %");
  });

  it("says what to do on a path with nothing measured", async () => {
    renderPanel(limit, EMPTY_ANALYSIS);
    expect(await within(panel(TITLE)).findByText(/No throughput run analysed yet/)).toBeDefined();
    expect(panel(TITLE).querySelector("table")).toBeNull();
  });

  it("says so when the server has no ceilings with today's tuning", async () => {
    renderPanel(limit, { ...ANALYSIS, ceilings_now: null });
    expect(await within(panel(TITLE)).findByText(/No ceilings with today's tuning/)).toBeDefined();
  });

  it("survives every term unknown and a run without rate or evidence", async () => {
    renderPanel(limit, UNKNOWN_ANALYSIS);
    const limits = panel(TITLE);
    await within(limits).findByText("Unknown");
    expect(within(limits).getByText(/Every term is unknown/)).toBeDefined();
    expect(within(limits).getByText("unknown — link speed unknown")).toBeDefined();
    expect(within(limits).getByText("The diagnosis came with no evidence sentences.")).toBeDefined();
    expect(limits.querySelector("tr.winning")).toBeNull();
    expect(within(limits).getAllByText("source not reported")).toHaveLength(4);
    expect(screen.queryByText(/failed to render/)).toBeNull();
  });

  it("says it is loading, then why it failed", async () => {
    renderPanel(limit, 500);
    expect(screen.getByRole("status").textContent).toBe("Loading the diagnosis…");
    expect(await screen.findByText("Could not load the diagnosis: server error.")).toBeDefined();
  });
});
