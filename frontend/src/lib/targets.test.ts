import { describe, expect, it } from "vitest";

import type { LatencyPoint } from "../api/latencyQueries";
import type { TargetLatencySeries, TargetPath, TargetRoutes, TargetRttSeries, TargetRun } from "../api/targetQueries";
import {
  failedRunsIn,
  filterTargets,
  meshesByTarget,
  normalizeTarget,
  routesAsPath,
  runCounts,
  runCountsText,
  runFindings,
  targetHref,
  targetRttFigure,
} from "./targets";

const SOURCE = { id: "11111111-1111-4111-8111-111111111111", name: "athens" };

function row(target: string, testTypes: string[] = ["ping"]): TargetPath {
  return {
    source: SOURCE, target, test_types: testTypes, last_run_at: "2026-11-22T12:00:00Z", last_status: "ok",
    last_run_test_type: "ping", data_age_s: 30, rtt_median_ms: 8, loss_fraction: 0, sent_last_hour: 600,
  };  // prettier-ignore
}

function run(id: string, status: TargetRun["status"], startedAt: string, testType: TargetRun["test_type"] = "ping",
  summary: Record<string, unknown> = {}, error = ""): TargetRun {
  return { id, test_type: testType, test_id: "t", started_at: startedAt, ended_at: startedAt, status, error, summary };
}  // prettier-ignore

const SERIES: TargetRttSeries = {
  source: SOURCE,
  target: "example.org",
  from: "2026-11-22T11:00:00Z",
  to: "2026-11-22T12:00:00Z",
  retained_from: "2026-10-23T12:00:00Z",
  bucket_s: 60,
  latest: [],
  points: [
    { t: "2026-11-22T11:00:00Z", min: 7.8, p10: 7.9, p50: 8.1, p90: 9, max: 12, count: 9, sent: 10, lost: 1, loss: 0.1 },
    { t: "2026-11-22T11:01:00Z", min: 7.7, p10: 7.9, p50: 8.0, p90: 9, max: 10, count: 10, sent: 10, lost: 0, loss: 0 },
    // Ten minutes without pings: a gap, not a line across it.
    { t: "2026-11-22T11:11:00Z", min: 7.7, p10: 7.9, p50: 8.2, p90: 9, max: 10, count: 10, sent: 10, lost: 0, loss: 0 },
  ],
};

function latencyPoint(time: string, oneWayTrusted: boolean): LatencyPoint {
  return {
    time, sent: 580, answered: 568, forward_lost: 1, backward_lost: 11, forward_loss_fraction: 1 / 580,
    backward_loss_fraction: 11 / 579, forward_min_ms: 20, forward_p50_ms: 20.1, forward_p90_ms: 20.2,
    forward_p99_ms: 20.4, forward_max_ms: 21, backward_min_ms: 5, backward_p50_ms: 5.1, backward_p90_ms: 5.2,
    backward_p99_ms: 5.3, backward_max_ms: 5.6, round_trip_min_ms: 25, round_trip_p50_ms: 25.2, round_trip_p99_ms: 25.6,
    clock_error_ms: 0.002, one_way_trusted: oneWayTrusted, loaded: false,
  };
}  // prettier-ignore

// The device declared its clock unsynchronized in the second minute.
const LATENCY: TargetLatencySeries = {
  source: SOURCE,
  target: "example.org",
  from: SERIES.from,
  to: SERIES.to,
  retained_from: SERIES.retained_from,
  bucket_s: 60,
  clock_error_limit_ms: 0.5,
  points: [latencyPoint("2026-11-22T11:00:00Z", true), latencyPoint("2026-11-22T11:01:00Z", false)],
};

describe("targets", () => {
  it("links a target path, escaping the host", () => {
    expect(targetHref(SOURCE.id, "2001:db8::1")).toBe(`/targets/${SOURCE.id}/2001%3Adb8%3A%3A1`);
    expect(targetHref("a b", "example.org")).toBe("/targets/a%20b/example.org");
  });

  it("spells a target as the server does", () => {
    expect(normalizeTarget(" Example.ORG. ")).toBe("example.org");
    expect(normalizeTarget(".")).toBe(".");
  });

  it("names the list meshes of each target, whatever their case", () => {
    const named = meshesByTarget([
      { name: "dns", targets: ["NS1.example.org", "192.0.2.7"] },
      { name: "web", targets: ["ns1.example.org."] },
      { name: "mesh" },
    ]);
    expect(named.get("ns1.example.org")).toEqual(["dns", "web"]);
    expect(named.get("192.0.2.7")).toEqual(["dns"]);
  });

  it("filters rows by every word", () => {
    const rows = [row("example.org"), row("192.0.2.7", ["ping", "trace"])];
    expect(filterTargets(rows, "").length).toBe(2);
    expect(filterTargets(rows, "ATHENS trace").map((r) => r.target)).toEqual(["192.0.2.7"]);
    expect(filterTargets(rows, "nothing")).toEqual([]);
  });

  it("counts runs by status, ok first", () => {
    const runs = [
      run("1", "failed", "2026-11-22T11:50:00Z"),
      run("2", "ok", "2026-11-22T11:40:00Z"),
      run("3", "failed", "2026-11-22T11:30:00Z"),
      run("4", "missed", "2026-11-22T11:20:00Z"),
    ];
    expect(runCounts(runs)).toMatchObject({ ok: 1, notOk: 3 });
    expect(runCountsText(runs)).toBe("1 ok, 2 failed, 1 missed");
    expect(failedRunsIn(runs, "2026-11-22T11:25:00Z", "2026-11-22T12:00:00Z").map((r) => r.id)).toEqual(["1", "3"]);
  });

  it("says what an ok run found, per kind", () => {
    expect(runFindings(run("p", "ok", "x", "ping", { rtt_median_ms: 8.123, loss_fraction: 0.1 }))).toBe(
      "median 8.12 ms, 10.0 % loss",
    );
    expect(runFindings(run("p", "ok", "x", "ping", { rtt_median_ms: null, loss_fraction: 1 }))).toBe(
      "no reply, 100.0 % loss",
    );
    expect(runFindings(run("t", "ok", "x", "trace", { distinct_paths: 2, flows: 16, reached: 16 }))).toBe(
      "2 routes, 16 of 16 flows reached",
    );
    expect(runFindings(run("f", "ok", "x", "flowsweep", { sent: 160, answered: 158, rtt_min_ms: 7.8 }))).toBe(
      "158 of 160 probes answered, min 7.80 ms",
    );
    expect(runFindings(run("l", "ok", "x", "latency", { sent: 580, answered: 568, round_trip_p50_ms: 25.139 }))).toBe(
      "568 of 580 answered, round trip median 25.14 ms",
    );
    expect(runFindings(run("t", "ok", "x", "trace", {}))).toBe("");
    expect(runFindings(run("x", "failed", "x", "ping", { rtt_median_ms: 8 }))).toBe("");
  });

  it("draws RTT percentiles with gaps, loss and the failed runs", () => {
    const failed = [run("f", "failed", "2026-11-22T11:05:00Z", "ping", {}, "ping: unknown host")];
    const { data, layout } = targetRttFigure(SERIES, failed);
    expect(data.map((trace) => trace.name)).toEqual([
      undefined,
      "RTT p10–p90",
      "RTT median",
      "RTT min",
      "loss",
      "failed runs",
    ]);
    const median = data[2] as { x: string[]; y: (number | null)[] };
    expect(median.y).toEqual([8.1, 8.0, null, 8.2]);
    expect(median.x[2]).toBe("2026-11-22T11:02:00.000Z");
    const loss = data[4] as { y: number[] };
    expect(loss.y).toEqual([10, 0, 0]);
    expect((data[5] as { hovertext: string[] }).hovertext).toEqual(["ping failed: ping: unknown host"]);
    expect(layout.xaxis?.type).toBe("date");
    expect(targetRttFigure(SERIES, []).data.length).toBe(5);
  });

  it("draws a latency test's rows each way below the pings, the round trip where the device's clock is unsynchronized", () => {
    const { data, layout } = targetRttFigure(SERIES, [], LATENCY);
    const names = data.map((trace) => trace.name);
    expect(names).toContain("athens → example.org one-way median");
    expect(names).toContain("example.org → athens loss");
    const roundTrip = data.find((trace) => trace.name?.startsWith("round trip median")) as { y: (number | null)[]; yaxis: string };
    expect(roundTrip.y).toEqual([null, 25.2]);
    expect(roundTrip.yaxis).toBe("y3");
    const median = data.find((trace) => trace.name === "athens → example.org one-way median") as { y: (number | null)[] };
    expect(median.y).toEqual([20.1, null]);
    expect(layout.yaxis4?.title).toEqual({ text: "loss % each way" });
    expect(layout.xaxis?.anchor).toBe("y4");
    // Without pings the latency rows are the whole chart.
    const alone = targetRttFigure({ ...SERIES, points: [] }, [], LATENCY);
    expect(alone.layout.yaxis?.title).toEqual({ text: "one-way (ms)" });
    expect(alone.layout.yaxis3).toBeUndefined();
    expect(alone.data.some((trace) => trace.name === "RTT median")).toBe(false);
  });

  it("hands a target's routes to the agent-path route functions", () => {
    const routes: TargetRoutes = {
      source: SOURCE, target: "example.org", from: "a", to: "b", retained_from: "c",
      routes: [], runs: [], changes: [], truncated: false,
    };  // prettier-ignore
    expect(routesAsPath(routes)).toMatchObject({ destination: { id: "", name: "example.org" }, start: "a", end: "b" });
  });
});
