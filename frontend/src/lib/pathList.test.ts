import { describe, expect, it } from "vitest";

import {
  NONE_VALUE,
  PAGE_SIZE,
  distinctValues,
  filterPaths,
  isFiltered,
  isStale,
  pagePaths,
  pageRange,
  pairParam,
  parseView,
  rttSparkLabel,
  runsSparkLabel,
  sortPaths,
  toggleSort,
  viewParams,
  type ListedPath,
} from "./pathList";

function path(source: string, destination: string, fields: Partial<ListedPath> = {}): ListedPath {
  return {
    source: { id: `${source}-id`, name: source },
    destination: { id: `${destination}-id`, name: destination },
    family: 4,
    rtt_median_ms: 10,
    loss_fraction: 0,
    forward_loss_fraction: null,
    backward_loss_fraction: null,
    rate_bps: 1e9,
    fraction_of_ceiling: 0.9,
    diagnosis: "capacity",
    limit: "link",
    open_findings: 0,
    data_age_s: 60,
    last_run_status: "ok",
    ...fields,
  };
}

function names(paths: readonly ListedPath[]): string[] {
  return paths.map((item) => `${item.source.name}>${item.destination.name}`);
}

const DEFAULT = parseView(new URLSearchParams());

describe("parseView and viewParams", () => {
  it("reads the defaults from an empty URL and writes them back as nothing", () => {
    expect(DEFAULT).toEqual({
      text: "",
      mesh: null,
      family: null,
      openFindingsOnly: false,
      diagnosis: null,
      status: null,
      oneWayLoss: null,
      sort: "path",
      direction: "asc",
      page: 1,
    });
    expect(viewParams(DEFAULT).toString()).toBe("");
  });

  it("round-trips every field", () => {
    const params = new URLSearchParams(
      "q=dca+dcb&mesh=lab&family=6&findings=open&diagnosis=receive_window&status=failed&oneway=crit&sort=rtt&dir=asc&page=3",
    );
    const view = parseView(params);
    expect(view).toEqual({
      text: "dca dcb",
      mesh: "lab",
      family: 6,
      openFindingsOnly: true,
      diagnosis: "receive_window",
      status: "failed",
      oneWayLoss: "crit",
      sort: "rtt",
      direction: "asc",
      page: 3,
    });
    expect(parseView(viewParams(view))).toEqual(view);
  });

  it("keeps one family's paths, and both without a family", () => {
    const four = path("dca", "dcb");
    const six = path("dca", "dcb", { family: 6 });
    expect(filterPaths([four, six], { ...DEFAULT, family: 6 })).toEqual([six]);
    expect(filterPaths([four, six], { ...DEFAULT, family: 4 })).toEqual([four]);
    expect(filterPaths([four, six], DEFAULT)).toEqual([four, six]);
    expect(parseView(new URLSearchParams("family=5")).family).toBeNull();
    expect(pairParam(six)).toBe("dca-id:dcb-id:6");
    expect(pairParam(four)).toBe("dca-id:dcb-id");
  });

  it("falls back to defaults on malformed values", () => {
    const view = parseView(new URLSearchParams("sort=nonsense&dir=up&page=-2&mesh=&findings=yes"));
    expect(view.sort).toBe("path");
    expect(view.direction).toBe("asc");
    expect(view.page).toBe(1);
    expect(view.mesh).toBeNull();
    expect(view.openFindingsOnly).toBe(false);
    expect(parseView(new URLSearchParams("page=abc")).page).toBe(1);
    expect(parseView(new URLSearchParams("oneway=lots")).oneWayLoss).toBeNull();
  });

  it("gives each column its worst-first direction when the URL names none", () => {
    expect(parseView(new URLSearchParams("sort=rtt")).direction).toBe("desc");
    expect(parseView(new URLSearchParams("sort=fraction")).direction).toBe("asc");
    expect(viewParams(parseView(new URLSearchParams("sort=rtt"))).toString()).toBe("sort=rtt");
  });
});

describe("toggleSort", () => {
  it("starts a new column worst first, flips the same column, and goes back to page 1", () => {
    const byRtt = toggleSort({ ...DEFAULT, page: 4 }, "rtt");
    expect([byRtt.sort, byRtt.direction, byRtt.page]).toEqual(["rtt", "desc", 1]);
    const flipped = toggleSort(byRtt, "rtt");
    expect(flipped.direction).toBe("asc");
    expect(toggleSort(flipped, "rtt").direction).toBe("desc");
    expect(toggleSort(DEFAULT, "path").direction).toBe("desc");
  });
});

describe("filterPaths", () => {
  const paths = [
    path("dca", "dcb", { open_findings: 2, diagnosis: "receive_window" }),
    path("dcb", "dca", { last_run_status: "failed" }),
    path("dca", "edge-1", { diagnosis: null, limit: null }),
    path("edge-1", "dcb", { last_run_status: null }),
  ];

  it("keeps paths whose ends name every word, case-insensitively", () => {
    expect(names(filterPaths(paths, { ...DEFAULT, text: "EDGE" }))).toEqual(["dca>edge-1", "edge-1>dcb"]);
    expect(names(filterPaths(paths, { ...DEFAULT, text: " dca  dcb " }))).toEqual(["dca>dcb", "dcb>dca"]);
    expect(filterPaths(paths, { ...DEFAULT, text: "nowhere" })).toEqual([]);
  });

  it("filters by open findings, diagnosis (or none) and last status (or none)", () => {
    expect(names(filterPaths(paths, { ...DEFAULT, openFindingsOnly: true }))).toEqual(["dca>dcb"]);
    expect(names(filterPaths(paths, { ...DEFAULT, diagnosis: "receive_window" }))).toEqual(["dca>dcb"]);
    expect(names(filterPaths(paths, { ...DEFAULT, diagnosis: NONE_VALUE }))).toEqual(["dca>edge-1"]);
    expect(names(filterPaths(paths, { ...DEFAULT, status: "failed" }))).toEqual(["dcb>dca"]);
    expect(names(filterPaths(paths, { ...DEFAULT, status: NONE_VALUE }))).toEqual(["edge-1>dcb"]);
  });

  it("filters by one-way loss in either direction, or by having none", () => {
    const measured = [
      path("a", "b", { forward_loss_fraction: 0.02, backward_loss_fraction: 0 }),
      path("b", "a", { forward_loss_fraction: 0, backward_loss_fraction: 0.002 }),
      path("a", "c", { forward_loss_fraction: 0.0005, backward_loss_fraction: null }),
      path("c", "a"),
    ];
    expect(names(filterPaths(measured, { ...DEFAULT, oneWayLoss: "warn" }))).toEqual(["a>b", "b>a"]);
    expect(names(filterPaths(measured, { ...DEFAULT, oneWayLoss: "crit" }))).toEqual(["a>b"]);
    expect(names(filterPaths(measured, { ...DEFAULT, oneWayLoss: NONE_VALUE }))).toEqual(["c>a"]);
    expect(isFiltered({ ...DEFAULT, oneWayLoss: "warn" })).toBe(true);
  });

  it("combines filters", () => {
    expect(filterPaths(paths, { ...DEFAULT, text: "dcb", status: "failed", openFindingsOnly: true })).toEqual([]);
  });

  it("says when the view is filtered", () => {
    expect(isFiltered(DEFAULT)).toBe(false);
    expect(isFiltered({ ...DEFAULT, text: "  " })).toBe(false);
    expect(isFiltered({ ...DEFAULT, mesh: "lab" })).toBe(true);
    expect(isFiltered({ ...DEFAULT, sort: "rtt", page: 2 })).toBe(false);
  });
});

describe("sortPaths", () => {
  const paths = [
    path("b", "a", { rtt_median_ms: 30, open_findings: 1, data_age_s: 10 }),
    path("a", "c", { rtt_median_ms: null, open_findings: 0, data_age_s: null }),
    path("a", "b", { rtt_median_ms: 5, open_findings: 1, data_age_s: 7200 }),
    path("c", "a", { rtt_median_ms: 30, open_findings: 3, data_age_s: 60 }),
  ];

  it("sorts by name with the destination breaking ties", () => {
    expect(names(sortPaths(paths, "path", "asc"))).toEqual(["a>b", "a>c", "b>a", "c>a"]);
    expect(names(sortPaths(paths, "path", "desc"))).toEqual(["c>a", "b>a", "a>c", "a>b"]);
  });

  it("sorts numbers both ways, unknown values last either way, ties by name", () => {
    expect(names(sortPaths(paths, "rtt", "desc"))).toEqual(["b>a", "c>a", "a>b", "a>c"]);
    expect(names(sortPaths(paths, "rtt", "asc"))).toEqual(["a>b", "b>a", "c>a", "a>c"]);
    expect(names(sortPaths(paths, "findings", "desc"))).toEqual(["c>a", "a>b", "b>a", "a>c"]);
    expect(names(sortPaths(paths, "age", "desc"))).toEqual(["a>b", "c>a", "b>a", "a>c"]);
  });

  it("sorts by the diagnosis and then the limit, and leaves the input alone", () => {
    const limited = [
      path("a", "b", { diagnosis: "receive_window", limit: "receive_window" }),
      path("a", "c", { diagnosis: null, limit: null }),
      path("b", "c", { diagnosis: "capacity", limit: "link" }),
    ];
    expect(names(sortPaths(limited, "limit", "asc"))).toEqual(["b>c", "a>b", "a>c"]);
    expect(names(limited)).toEqual(["a>b", "a>c", "b>c"]);
  });

  it("sorts by rate, fraction of ceiling and loss", () => {
    const measured = [
      path("a", "b", { rate_bps: 9e8, fraction_of_ceiling: 0.2, loss_fraction: 0.01 }),
      path("a", "c", { rate_bps: 3e9, fraction_of_ceiling: 0.95, loss_fraction: 0 }),
    ];
    expect(names(sortPaths(measured, "rate", "asc"))).toEqual(["a>b", "a>c"]);
    expect(names(sortPaths(measured, "fraction", "desc"))).toEqual(["a>c", "a>b"]);
    expect(names(sortPaths(measured, "loss", "desc"))).toEqual(["a>b", "a>c"]);
  });

  it("sorts by one-way loss each way, paths without a latency test last", () => {
    const measured = [
      path("a", "b", { forward_loss_fraction: 0.001, backward_loss_fraction: 0.03 }),
      path("a", "c"),
      path("b", "a", { forward_loss_fraction: 0.03, backward_loss_fraction: 0.001 }),
    ];
    expect(names(sortPaths(measured, "forward_loss", "desc"))).toEqual(["b>a", "a>b", "a>c"]);
    expect(names(sortPaths(measured, "backward_loss", "desc"))).toEqual(["a>b", "b>a", "a>c"]);
    expect(names(sortPaths(measured, "forward_loss", "asc"))).toEqual(["a>b", "b>a", "a>c"]);
    expect(parseView(new URLSearchParams("sort=forward_loss")).direction).toBe("desc");
  });
});

describe("pagePaths and pageRange", () => {
  const many = Array.from({ length: 9900 }, (_, index) => index);

  it("shows 100 rows a page with their positions", () => {
    const first = pagePaths(many, 1);
    expect(first.rows).toHaveLength(PAGE_SIZE);
    expect([first.first, first.last, first.pageCount]).toEqual([1, 100, 99]);
    expect(pageRange(first)).toBe("1–100 of 9,900");
    const last = pagePaths(many, 99);
    expect(last.rows[0]).toBe(9800);
    expect(pageRange(last)).toBe("9,801–9,900 of 9,900");
  });

  it("clamps a page past the end or below 1, and handles a short or empty list", () => {
    expect(pagePaths(many, 500).page).toBe(99);
    expect(pagePaths(many, 0).page).toBe(1);
    const short = pagePaths([1, 2, 3], 2);
    expect([short.page, short.first, short.last, short.pageCount]).toEqual([1, 1, 3, 1]);
    const empty = pagePaths([], 1);
    expect([empty.first, empty.last, empty.pageCount, empty.rows.length]).toEqual([0, 0, 1, 0]);
    expect(pageRange(empty)).toBe("0 of 0");
  });
});

describe("helpers", () => {
  it("calls data older than an hour stale, and unknown age not stale", () => {
    expect(isStale({ data_age_s: 3599 })).toBe(false);
    expect(isStale({ data_age_s: 3601 })).toBe(true);
    expect(isStale({ data_age_s: null })).toBe(false);
    expect(isStale({ data_age_s: 100 }, 60)).toBe(true);
  });

  it("lists the values present, none included, sorted", () => {
    const paths = [path("a", "b"), path("a", "c", { last_run_status: null }), path("b", "c")];
    expect(distinctValues(paths, (item) => item.last_run_status)).toEqual([NONE_VALUE, "ok"]);
  });

  it("writes a path as the spark endpoint's pair", () => {
    expect(pairParam(path("a", "b"))).toBe("a-id:b-id");
  });
});

describe("sparkline labels", () => {
  it("names the RTT range of the day, or says there is none", () => {
    expect(rttSparkLabel({ rtt_p50_ms: [null, 7.5, 12.25], runs: [] })).toBe(
      "RTT median hourly over 24 h: 7.50 ms to 12.25 ms",
    );
    expect(rttSparkLabel({ rtt_p50_ms: [8, 8], runs: [] })).toBe("RTT median hourly over 24 h: 8.00 ms");
    expect(rttSparkLabel({ rtt_p50_ms: [null, null], runs: [] })).toBe("No RTT in the last 24 h");
  });

  it("names the newest run against its ceiling, or says there is none", () => {
    const run = { started_at: "2026-11-22T11:00:00Z", rate_bps: 3.1e9, ceiling_bps: 3.2e9 };
    expect(runsSparkLabel({ rtt_p50_ms: [], runs: [run, run] })).toBe(
      "Throughput of the last 2 runs against the ceiling (dashed); newest 3.1 Gbit/s of 3.2 Gbit/s",
    );
    expect(runsSparkLabel({ rtt_p50_ms: [], runs: [{ ...run, ceiling_bps: null }] })).toBe(
      "Throughput of the newest run against the ceiling (dashed); newest 3.1 Gbit/s of –",
    );
    expect(runsSparkLabel({ rtt_p50_ms: [], runs: [] })).toBe("No analysed throughput run in 31 days");
  });
});
