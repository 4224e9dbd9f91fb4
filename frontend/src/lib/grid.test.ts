import { describe, expect, it } from "vitest";

import type { Mesh, MeshGrid } from "../api/queries";
import { CHOICES, GRID_THRESHOLDS, gridCell } from "../test/analysisFixtures";
import {
  cellKey,
  cellReading,
  cellTitle,
  compactAge,
  compactRate,
  defaultMesh,
  gridMatrix,
  gridTitle,
  gridView,
  parseMetric,
  pathAtHref,
  toneLegend,
  type GridMetric,
} from "./grid";
import { formFromStored, storedFromForm } from "./gridThresholds";

const A = { id: "a", name: "dca" };
const B = { id: "b", name: "dcb" };
const C = { id: "c", name: "dcc" };

const cell = gridCell;
const T = GRID_THRESHOLDS;
const LABELS = { diagnoses: CHOICES.diagnosis, verdicts: CHOICES.rtt_mode_verdict };

function grid(cells: MeshGrid["cells"], agents = [A, B, C]): MeshGrid {
  return { mesh: "m", agents, cells, thresholds: T, generated_at: "2026-11-22T12:10:00Z" };
}

describe("gridMatrix", () => {
  it("keeps senders as rows and receivers as columns, in the server's order", () => {
    const matrix = gridMatrix(grid([cell(A, B), cell(A, C)]));
    expect(matrix.sources).toEqual([A]);
    expect(matrix.destinations).toEqual([B, C]);
    expect(matrix.cells.get(cellKey("a", "c"))?.destination).toEqual(C);
    expect(matrix.cells.get(cellKey("c", "a"))).toBeUndefined();
  });

  it("is empty for a mesh without pairs", () => {
    expect(gridMatrix(grid([], [A])).sources).toEqual([]);
  });
});

describe("cellReading", () => {
  const cases: [GridMetric, Partial<MeshGrid["cells"][number]>, string, string][] = [
    ["fraction", { fraction_of_ceiling: 0.95 }, "95%", "good"],
    ["fraction", { fraction_of_ceiling: 0.7 }, "70%", "warn"],
    ["fraction", { fraction_of_ceiling: 0.5 }, "50%", "bad"],
    ["fraction", { fraction_of_ceiling: null }, "–", "none"],
    ["rate", { rate_bps: 3.1e9 }, "3.1G", "good"],
    ["rate", { rate_bps: 4.2e8 }, "420M", "warn"],
    ["rate", { rate_bps: 5e7 }, "50M", "bad"],
    ["rtt", { rtt_median_ms: 7.94 }, "7.9", "good"],
    ["rtt", { rtt_median_ms: 120 }, "120", "warn"],
    ["rtt", { rtt_median_ms: 250 }, "250", "bad"],
    ["rtt", { rtt_median_ms: null }, "–", "none"],
    ["loss", { loss_fraction: 0 }, "0%", "good"],
    ["loss", { loss_fraction: 0.002 }, "0.2%", "warn"],
    ["loss", { loss_fraction: 0.25 }, "25%", "bad"],
    // The direction's own loss (latency tests), by the same loss thresholds; the pings' loss aside.
    ["one_way_loss", { forward_loss_fraction: 0, loss_fraction: 0.25 }, "0%", "good"],
    ["one_way_loss", { forward_loss_fraction: 0.004 }, "0.4%", "warn"],
    ["one_way_loss", { forward_loss_fraction: 0.01 }, "1%", "bad"],
    ["one_way_loss", { forward_loss_fraction: null }, "–", "none"],
    ["modes", { mode_count: 1 }, "1", "good"],
    ["modes", { mode_count: 2 }, "2", "warn"],
    ["modes", { mode_count: null }, "–", "none"],
    ["status", { last_run_status: "ok" }, "ok", "good"],
    ["status", { last_run_status: "failed" }, "failed", "bad"],
    ["status", { last_run_status: "missed" }, "missed", "warn"],
    ["status", { last_run_status: null }, "–", "none"],
  ];
  it.each(cases)("%s %j reads %s (%s)", (metric, fields, text, tone) => {
    expect(cellReading(cell(A, B, fields), metric, T)).toEqual({ text, tone });
  });

  it("follows the mesh's thresholds", () => {
    const strict = { ...T, fraction_good: 0.99, fraction_bad: 0.98 };
    expect(cellReading(cell(A, B, { fraction_of_ceiling: 0.97 }), "fraction", strict).tone).toBe("bad");
  });

  it("shows stale data as its age whatever the metric", () => {
    const old = cell(A, B, { stale: true, data_age_s: 5 * 3600 });
    for (const metric of ["fraction", "rtt", "status"] as const) {
      expect(cellReading(old, metric, T)).toEqual({ text: "5h", tone: "stale" });
    }
  });
});

describe("formatting", () => {
  it.each([
    [30, "30s"],
    [600, "10m"],
    [5 * 3600, "5h"],
    [3 * 86_400, "3d"],
  ])("compactAge(%d) is %s", (seconds, text) => {
    expect(compactAge(seconds)).toBe(text);
  });

  it("shortens rates", () => {
    expect([compactRate(9.41e9), compactRate(12.5e9), compactRate(800)]).toEqual(["9.4G", "13G", "800"]);
  });

  it("reads the metric from the URL, throughput against its ceiling by default", () => {
    expect([parseMetric("rtt"), parseMetric(null), parseMetric("nonsense")]).toEqual(["rtt", "fraction", "fraction"]);
    expect(parseMetric("one_way_loss")).toBe("one_way_loss");
  });
});

describe("pathAtHref", () => {
  it("opens the path page over the 24 h up to the cell's newest data", () => {
    expect(pathAtHref("a", "b", "2026-11-22T12:05:00Z")).toBe(
      "/paths/a/b?from=2026-11-21T12%3A05%3A00.000Z&to=2026-11-22T12%3A05%3A00Z",
    );
  });

  it("opens the plain path page without data", () => {
    expect(pathAtHref("a", "b", null)).toBe("/paths/a/b");
  });

  it("opens an IPv6 cell's path page on its family", () => {
    expect(pathAtHref("a", "b", null, 6)).toBe("/paths/a/b?family=6");
    expect(pathAtHref("a", "b", "2026-11-22T12:05:00Z", 6)).toBe(
      "/paths/a/b?family=6&from=2026-11-21T12%3A05%3A00.000Z&to=2026-11-22T12%3A05%3A00Z",
    );
  });
});

describe("gridView", () => {
  it("puts row -> column on top and the mirrored column -> row under it", () => {
    const view = gridView(
      grid(
        [cell(A, B, { fraction_of_ceiling: 0.95 }), cell(B, A, { fraction_of_ceiling: 0.3, open_findings: 0 })],
        [A, B],
      ),
      "fraction",
      LABELS,
    );
    const [rowA, rowB] = view.rows;
    const ab = rowA?.squares.find((square) => square.key === "b");
    expect(ab?.forward?.text).toBe("95%");
    expect(ab?.forward?.findings).toBe(1);
    expect(ab?.reverse?.text).toBe("30%");
    expect(ab?.reverse?.href).toContain("/paths/b/a?");
    expect(ab?.forward?.key).toBe(cellKey("a", "b"));
    expect(gridTitle(view, cellKey("b", "a"))).toContain("dcb → dca");
    expect(gridTitle(view, "nope")).toBeNull();
    const diagonal = rowB?.squares.find((square) => square.key === "b");
    expect(diagonal?.forward).toBeNull();
    expect(diagonal?.reverse).toBeNull();
  });

  it("leaves an untested direction empty (a disjoint mesh)", () => {
    const [row] = gridView(grid([cell(A, B)], [A, B]), "fraction", LABELS).rows;
    expect(row?.squares[0]?.forward).not.toBeNull();
    expect(row?.squares[0]?.reverse).toBeNull();
  });

  // How fast is a benchmark's question (make bench-ui), never a timed assertion here.
  it("builds 9,900 cells", () => {
    const agents = Array.from({ length: 100 }, (_, index) => ({ id: `id-${index}`, name: `agent-${index}` }));
    const cells = agents.flatMap((source) =>
      agents.filter((destination) => destination !== source).map((destination) => cell(source, destination)),
    );
    const view = gridView(grid(cells, agents), "rtt", LABELS);
    expect(view.rows).toHaveLength(100);
    expect(view.rows.flatMap((row) => row.squares)).toHaveLength(10_000);
  });
});

describe("cellTitle", () => {
  it("labels every figure behind the cell", () => {
    const title = cellTitle(cell(A, B, { stale: true, data_age_s: 7200 }), LABELS);
    expect(title).toContain("dca → dcb");
    expect(title).toContain("STALE: newest data 2026-11-22 12:05:00 UTC (2h ago)");
    expect(title).toContain("last run: ping ok");
    expect(title).toContain("diagnosis: Receive window limited");
    expect(title).toContain("RTT median 7.90 ms");
    expect(title).toContain("no one-way loss: no latency interval without Fathom's own load in the last hour");
    expect(cellTitle(cell(A, B, { forward_loss_fraction: 0.005 }), LABELS)).toContain(
      "last hour: one-way loss 0.50 % (latency test, unloaded)",
    );
    expect(title).toContain("1 open finding");
  });

  it("says when there is no data at all", () => {
    const title = cellTitle(cell(A, B, { last_run_at: null, rate_bps: null, loss_fraction: null }), LABELS);
    expect(title).toContain("no data: no run of any kind reported");
    expect(title).toContain("no pings in the last hour");
  });
});

describe("toneLegend", () => {
  it("words each tone with the thresholds in force, then no data and stale", () => {
    const legend = toneLegend("rtt", T);
    expect(legend.map(([tone]) => tone)).toEqual(["good", "warn", "bad", "none", "stale"]);
    expect(legend[2]?.[1]).toBe("from 250 ms");
    expect(legend[4]?.[1]).toBe("stale: nothing for 1 h (shows its age)");
  });

  it("words one-way loss by the loss thresholds, and its no data as no latency test", () => {
    const legend = toneLegend("one_way_loss", { ...T, loss_warn: 0.002 });
    expect(legend.slice(0, 4)).toEqual([
      ["good", "under 0.20 %"],
      ["warn", "from 0.20 %"],
      ["bad", "from 1.00 %"],
      ["none", "no data: no unloaded latency interval"],
    ]);
  });
});

describe("thresholds form", () => {
  it("shows stored thresholds in the operator's units and blanks what is unset", () => {
    const form = formFromStored({ fraction_good: 0.07, rate_bad_bps: 2e8, stale_after_s: 5400 });
    expect(form.fraction_good).toBe("7");
    expect(form.rate_bad_bps).toBe("200");
    expect(form.stale_after_s).toBe("90");
    expect(form.rtt_warn_ms).toBe("");
  });

  it("stores what is filled in, back in the API's units", () => {
    const form = { ...formFromStored({}), fraction_bad: "40", loss_crit: "2", stale_after_s: "30", rtt_warn_ms: " " };
    expect(storedFromForm(form)).toEqual({
      thresholds: { fraction_bad: 0.4, loss_crit: 0.02, stale_after_s: 1800 },
      errors: {},
    });
  });

  it("refuses what is not a number", () => {
    const form = { ...formFromStored({}), rtt_crit_ms: "fast" };
    expect(storedFromForm(form).errors).toEqual({ rtt_crit_ms: "a number, or blank for the default" });
  });
});

describe("defaultMesh", () => {
  it("opens on the first enabled mesh, else the first", () => {
    const meshes: Mesh[] = [
      { name: "lab", kind: "mesh", enabled: false },
      { name: "default", kind: "mesh", enabled: true },
    ];
    expect(defaultMesh(meshes)).toBe("default");
    expect(defaultMesh([{ name: "lab", kind: "mesh", enabled: false }])).toBe("lab");
    expect(defaultMesh([])).toBeNull();
  });
});
