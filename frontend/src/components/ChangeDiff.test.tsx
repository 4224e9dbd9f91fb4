import { render, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { ChangeDiff } from "./ChangeDiff";

const CHANGES = {
  description: ["core links", null],
  enabled: [true, false],
  "tests.1.interval_s": [300, 600],
  "tests.0.name": [null, "ping"],
} as const;

describe("ChangeDiff", () => {
  it("shows every field with old struck out and new inserted", () => {
    render(<ChangeDiff changes={CHANGES} />);
    const table = screen.getByRole("table");
    const rows = within(table).getAllByRole("row").slice(1);
    expect(rows.map((row) => row.getAttribute("data-kind"))).toEqual(["removed", "changed", "added", "changed"]);
    expect(within(table).getByText("core links").tagName).toBe("DEL");
    expect(within(table).getByText("ping").tagName).toBe("INS");
    expect(within(table).getByText("600").tagName).toBe("INS");
  });

  it("fits a table cell in compact form", () => {
    render(<ChangeDiff changes={{ ...CHANGES, note: ["x".repeat(80), "y"] }} compact />);
    expect(screen.getAllByRole("listitem")).toHaveLength(4);
    expect(screen.getByText("+2 more")).toBeDefined();
  });

  it("says when nothing changed", () => {
    render(<ChangeDiff changes={{}} />);
    expect(screen.getByText("no field changes")).toBeDefined();
  });
});
