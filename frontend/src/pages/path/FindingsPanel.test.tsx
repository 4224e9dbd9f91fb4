import { screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { EMPTY_ANALYSIS } from "../../test/analysisFixtures";
import { FindingsPanel } from "./FindingsPanel";
import { panel, renderPanel, type PanelOf } from "./panelTesting";

const TITLE = "Findings";
const findings: PanelOf = (analysis, choices) => (
  <FindingsPanel analysis={analysis} choices={choices} />
);

describe("FindingsPanel", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it("lists findings with their server-coloured state and annotation", async () => {
    renderPanel(findings);
    const section = panel(TITLE);
    const state = await within(section).findByText("Open");
    expect(state.style.backgroundColor).toBe("rgb(207, 34, 46)");
    expect(within(section).getByText("-66 %")).toBeDefined();
    expect(within(section).getByText("Throughput")).toBeDefined(); // the server's label
    expect(within(section).getByText("net.ipv4.tcp_rmem changed on dcb at 05:58")).toBeDefined();
    expect(within(section).getByText("2026-11-22 06:00:00 UTC")).toBeDefined();
  });

  it("says what would open a finding when there is none", async () => {
    renderPanel(findings, EMPTY_ANALYSIS);
    expect(await within(panel(TITLE)).findByText(/No findings on this path/)).toBeDefined();
  });

  it("says it is loading, then why it failed", async () => {
    renderPanel(findings, 500);
    expect(screen.getByRole("status").textContent).toBe("Loading the findings…");
    expect(await screen.findByText("Could not load the findings: server error.")).toBeDefined();
  });
});
