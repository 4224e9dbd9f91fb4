import { screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { FindingChanges as Changes } from "../../api/findingQueries";
import { mockApi } from "../../test/mockApi";
import { choices, renderWithProviders } from "../../test/render";
import { FindingChanges } from "./FindingChanges";

const URL_PATH = "/api/v1/analysis/findings/7/changes/";
const RELATIONS = choices({
  change_relation: [
    { value: "same_path", label: "On this path", color: "#57606a" },
    { value: "host", label: "A host of this path", color: "#57606a" },
  ],
});

function changes(items: Changes["items"]): Changes {
  return { finding_id: 7, from: "2026-11-20T11:45:00Z", to: "2026-11-20T12:15:00Z", items };
}

describe("FindingChanges", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it("lists each change with the server's relation label, linking another finding to its path", async () => {
    mockApi({
      [URL_PATH]: changes([
        {
          relation: "same_path", at: "2026-11-20T11:55:00Z", sentence: "Route changed on a → b (1 new route)",
          finding_id: 9, source_id: "src", destination_id: "dst", family: 4,
        },
        {
          relation: "host", at: "2026-11-20T11:59:00Z", sentence: "b: iperf3 version 3.12 → 3.16",
          finding_id: null, source_id: null, destination_id: null, family: null,
        },
      ]),
    });
    renderWithProviders(<FindingChanges findingId={7} choices={RELATIONS} />);
    const link = await screen.findByRole("link", { name: "Route changed on a → b (1 new route)" });
    expect(link.getAttribute("href")).toBe("/paths/src/dst?finding=9");
    expect(screen.getByText("On this path, 2026-11-20 11:55:00 UTC:")).toBeDefined();
    expect(screen.getByText("b: iperf3 version 3.12 → 3.16")).toBeDefined();
    expect(screen.getByText("A host of this path, 2026-11-20 11:59:00 UTC:")).toBeDefined();
  });

  it("says plainly when nothing else changed", async () => {
    mockApi({ [URL_PATH]: changes([]) });
    renderWithProviders(<FindingChanges findingId={7} choices={RELATIONS} />);
    expect(await screen.findByText(/nothing else Fathom measures/)).toBeDefined();
    expect(screen.queryByRole("list")).toBeNull();
  });

  it("says why it could not load", async () => {
    mockApi({ [URL_PATH]: 500 });
    renderWithProviders(<FindingChanges findingId={7} choices={RELATIONS} />);
    expect(await screen.findByText("Could not load what else changed: server error.")).toBeDefined();
  });
});
