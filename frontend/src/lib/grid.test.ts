import { describe, expect, it } from "vitest";

import type { Mesh, MeshGrid } from "../api/queries";
import { gridCell } from "../test/analysisFixtures";
import {
  cellBackground,
  cellKey,
  cellTitle,
  defaultMesh,
  formatCellFraction,
  formatCellLoss,
  formatModeCount,
  gridMatrix,
} from "./grid";

const A = { id: "a", name: "dca" };
const B = { id: "b", name: "dcb" };
const C = { id: "c", name: "dcc" };

const cell = gridCell;

describe("gridMatrix", () => {
  it("keeps senders as rows and receivers as columns, in the server's order", () => {
    const grid: MeshGrid = { mesh: "disjoint", agents: [A, B, C], cells: [cell(A, B), cell(A, C)] };
    const matrix = gridMatrix(grid);
    expect(matrix.sources).toEqual([A]);
    expect(matrix.destinations).toEqual([B, C]);
    expect(matrix.cells.get(cellKey("a", "c"))?.destination).toEqual(C);
    expect(matrix.cells.get(cellKey("c", "a"))).toBeUndefined();
  });

  it("is empty for a mesh without pairs", () => {
    expect(gridMatrix({ mesh: "m", agents: [A], cells: [] }).sources).toEqual([]);
  });
});

describe("cellBackground", () => {
  it.each([
    [0.1, "rgb(245, 183, 177)"],
    [0.5, "rgb(245, 183, 177)"],
    [0.7, "rgb(251, 216, 138)"],
    [0.9, "rgb(168, 221, 181)"],
    [1.2, "rgb(168, 221, 181)"],
    [null, "rgb(230, 233, 238)"],
    [Number.NaN, "rgb(230, 233, 238)"],
  ])("%s -> %s", (fraction, expected) => {
    expect(cellBackground(fraction)).toBe(expected);
  });

  it("moves from red through amber to green", () => {
    expect(cellBackground(0.6)).toBe("rgb(248, 200, 158)");
    expect(cellBackground(0.85)).toBe("rgb(189, 220, 170)");
  });
});

describe("cell text", () => {
  it.each([
    [0.97, "97 %"],
    [1.12, "112 %"],
    [0, "0 %"],
    [null, "–"],
  ])("fraction %s -> %s", (fraction, expected) => {
    expect(formatCellFraction(fraction)).toBe(expected);
  });

  it("counts modes and shows loss", () => {
    expect(formatModeCount(1)).toBe("1 mode");
    expect(formatModeCount(2)).toBe("2 modes");
    expect(formatModeCount(null)).toBe("no sweep");
    expect(formatCellLoss(0.001)).toBe("loss 0.10 %");
    expect(formatCellLoss(null)).toBe("loss –");
  });

  it("titles a cell with labels from the choices", () => {
    const title = cellTitle(
      cell(A, B),
      { value: "receive_window", label: "Receive window limited", color: "#bc4c00" },
      { value: "ecmp", label: "Bimodal RTT (ECMP)", color: "#bc4c00" },
    );
    expect(title.split("\n")).toEqual([
      "dca → dcb",
      "3.1 Gbit/s of a 3.2 Gbit/s ceiling (97 %)",
      "diagnosis: Receive window limited, measured 2026-11-22 12:00:00 UTC",
      "loss in the last hour: 0 %",
      "2 modes: Bimodal RTT (ECMP)",
      "1 open finding",
    ]);
  });

  it("titles an unmeasured cell", () => {
    const empty = cell(A, B, {
      rate_bps: null,
      ceiling_bps: null,
      fraction_of_ceiling: null,
      diagnosis: null,
      measured_at: null,
      loss_fraction: null,
      mode_count: null,
      rtt_mode_verdict: null,
      open_findings: 0,
    });
    expect(cellTitle(empty, null, null).split("\n")).toEqual([
      "dca → dcb",
      "no throughput run analysed yet",
      "no pings in the last hour",
      "no flow sweep yet",
      "0 open findings",
    ]);
  });
});

describe("defaultMesh", () => {
  const mesh = (name: string, enabled?: boolean): Mesh => ({
    name,
    kind: "mesh",
    ...(enabled === undefined ? {} : { enabled }),
  });

  it("opens on the first enabled mesh", () => {
    expect(defaultMesh([mesh("lab", false), mesh("default"), mesh("other", true)])).toBe("default");
  });

  it("falls back to the first mesh, or none", () => {
    expect(defaultMesh([mesh("lab", false)])).toBe("lab");
    expect(defaultMesh([])).toBeNull();
  });
});
