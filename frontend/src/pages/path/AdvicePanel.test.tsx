import { fireEvent, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { ANALYSIS, EMPTY_ANALYSIS } from "../../test/analysisFixtures";
import { requestedUrls } from "../../test/mockApi";
import { AdvicePanel } from "./AdvicePanel";
import { ANALYSIS_PATH, panel, renderPanel, type PanelOf } from "./panelTesting";

const TITLE = "Advice";

function advice(onGoal: (goalBps: number | null) => void = vi.fn(), goalBps: number | null = null): PanelOf {
  return (analysis) => <AdvicePanel analysis={analysis} goalBps={goalBps} onGoal={onGoal} />;
}

function typeGoal(text: string) {
  fireEvent.change(within(panel(TITLE)).getByLabelText(/Goal rate/), { target: { value: text } });
  fireEvent.click(within(panel(TITLE)).getByRole("button", { name: "Apply" }));
}

describe("AdvicePanel", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it("shows each setting and the goal it is sized for", async () => {
    renderPanel(advice());
    const section = panel(TITLE);
    expect(await within(section).findByText("4096 131072 31457280")).toBeDefined();
    expect(within(section).getByText(/Sized for 10 Gbit\/s \(the default/)).toBeDefined();
    expect(within(section).getByLabelText<HTMLInputElement>(/Goal rate/).placeholder).toBe("10");
  });

  it("leaves out the default's explanation for a goal the user set", async () => {
    renderPanel(advice(vi.fn(), 1e10));
    const sized = await within(panel(TITLE)).findByText(/Sized for 10 Gbit\/s/);
    expect(sized.textContent).not.toContain("the default");
  });

  it("hands a typed goal up in bit/s", async () => {
    const onGoal = vi.fn();
    renderPanel(advice(onGoal));
    await within(panel(TITLE)).findByText("4096 131072 31457280");
    typeGoal("25");
    expect(onGoal).toHaveBeenCalledWith(25e9);
    typeGoal("");
    expect(onGoal).toHaveBeenLastCalledWith(null);
  });

  it("refuses a goal the server would reject, without asking it", async () => {
    const onGoal = vi.fn();
    const fetchMock = renderPanel(advice(onGoal));
    await within(panel(TITLE)).findByText("4096 131072 31457280");
    const before = requestedUrls(fetchMock, ANALYSIS_PATH).length;
    typeGoal("0");
    expect(within(panel(TITLE)).getByRole("alert").textContent).toContain("Give a goal between");
    expect(onGoal).not.toHaveBeenCalled();
    expect(requestedUrls(fetchMock, ANALYSIS_PATH)).toHaveLength(before);
  });

  it("says why there is no advice", async () => {
    renderPanel(advice(), EMPTY_ANALYSIS);
    expect(await within(panel(TITLE)).findByText(/No advice yet/)).toBeDefined();
  });

  it("says when the diagnosis asks for no setting", async () => {
    renderPanel(advice(), { ...ANALYSIS, advice: [] });
    expect(await within(panel(TITLE)).findByText(/Nothing to change for a goal of 10 Gbit\/s/)).toBeDefined();
  });

  it("keeps the goal form while it loads and after it failed", async () => {
    renderPanel(advice(), 500);
    expect(screen.getByRole("status").textContent).toBe("Loading the advice…");
    expect(await screen.findByText("Could not load the advice: server error.")).toBeDefined();
    expect(within(panel(TITLE)).getByLabelText(/Goal rate/)).toBeDefined();
  });
});
