import { render, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import type { PsconfigImportReport } from "../../api/perfsonar";
import { ImportReport, reportSummary } from "./ImportReport";

const APPLIED: PsconfigImportReport = {
  dry_run: false,
  meshes: [
    {
      name: "lhc",
      group: "LHC Mesh",
      action: "update",
      kind: "disjoint",
      members: ["ps-a", "ps-b", "athens"],
      targets: [],
      tests: [
        { name: "rtt", test_type: "ping", interval_s: 600, slip_s: 0, enabled: true },
        { name: "trace", test_type: "trace", interval_s: 3600, slip_s: 600, enabled: false },
      ],
    },
  ],
  nodes: [
    { name: "ps-a", address: "198.18.5.1", action: "register", element: "addresses.ps-a" },
    { name: "athens", address: "198.18.1.2", action: "matched", element: "addresses.athens-ps" },
  ],
  unmapped: [],
  address_classes: [],
};

describe("ImportReport", () => {
  it("tells what an import did, in the past tense", () => {
    render(<ImportReport report={APPLIED} />);
    expect(screen.getByRole("heading", { name: "Imported" })).toBeDefined();
    expect(screen.getByRole("status").textContent).toBe(
      "meshes: 1 updated; hosts: 1 matched, 1 registered; every element mapped.",
    );
    expect(screen.getByText("registered as a perfSONAR node")).toBeDefined();
    const tests = screen.getByText("lhc").closest("tr");
    if (tests === null) {
      throw new Error("no row for lhc");
    }
    expect(within(tests).getByText("updated").getAttribute("data-action")).toBe("update");
    expect(tests.textContent).toContain("every 10 min");
    expect(tests.textContent).toContain("every 1 h, slip 10 min");
    expect(within(tests).getByText("LHC Mesh")).toBeDefined();
    // The trace test is imported disabled, as the template's task is.
    expect(within(tests).getByText("disabled").closest("li")?.textContent).toBe("trace every 1 h, slip 10 min disabled");
    expect(screen.getByText("addresses.athens-ps").closest("tr")?.textContent).toContain("athens");
    expect(screen.getByText("Every element of the template mapped.")).toBeDefined();
    // No unknown hosts: no advice about them.
    expect(screen.queryByText(/Unknown hosts match no Fathom agent/)).toBeNull();
  });

  it("says what an empty template gives", () => {
    render(
      <ImportReport
        report={{ dry_run: true, meshes: [], nodes: [], unmapped: [{ element: "includes", reason: "includes are not fetched" }], address_classes: [] }}
      />,
    );
    expect(screen.getByText(/The template yields no mesh/)).toBeDefined();
    expect(screen.getByText("The template names no hosts.")).toBeDefined();
    expect(screen.getByText("includes")).toBeDefined();
  });

  it("summarizes a dry run in the future tense", () => {
    const dry = { ...APPLIED, dry_run: true, unmapped: [{ element: "tasks.x", reason: "r" }] };
    expect(reportSummary(dry)).toBe("meshes: 1 to update; hosts: 1 matched, 1 to register; 1 element not mapped.");
  });

  it("shows what each address class selected, and what Fathom could not evaluate", () => {
    render(
      <ImportReport
        report={{
          ...APPLIED,
          address_classes: [
            { name: "lhc-hosts", element: "address-classes.lhc-hosts", selected: ["ps-a", "athens-ps"], notes: [] },
            { name: "by-jq", element: "address-classes.by-jq", selected: [], notes: ["a jq filter is not evaluated: the class selects nothing"] },
          ],
        }}
      />,
    );
    expect(screen.getByRole("heading", { name: "Address classes" })).toBeDefined();
    expect(screen.getByText("lhc-hosts").closest("tr")?.textContent).toContain("ps-a, athens-ps");
    const jq = screen.getByText("by-jq").closest("tr");
    expect(jq?.textContent).toContain("nothing");
    expect(jq?.textContent).toContain("jq filter is not evaluated");
  });
});
