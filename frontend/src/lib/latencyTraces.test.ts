import { describe, expect, it } from "vitest";

import type { LatencyPoint } from "../api/latencyQueries";
import { latencyDirections, latencyTraces } from "./latencyTraces";

function point(time: string, extra: Partial<LatencyPoint> = {}): LatencyPoint {
  return {
    time,
    sent: 580,
    answered: 568,
    forward_lost: 12,
    backward_lost: 0,
    forward_loss_fraction: 12 / 580,
    backward_loss_fraction: 0,
    forward_min_ms: 20.01,
    forward_p50_ms: 20.08,
    forward_p90_ms: 20.14,
    forward_p99_ms: 20.4,
    forward_max_ms: 21.3,
    backward_min_ms: 5.0,
    backward_p50_ms: 5.05,
    backward_p90_ms: 5.1,
    backward_p99_ms: 5.3,
    backward_max_ms: 5.6,
    round_trip_min_ms: 25.02,
    round_trip_p50_ms: 25.13,
    round_trip_p99_ms: 25.6,
    clock_error_ms: 0.002,
    one_way_trusted: true,
    loaded: false,
    ...extra,
  };
}

const DIRECTIONS = latencyDirections("uplink", "ground", { forward: "#1f77b4", reverse: "#ff7f0e" });
const AXES = { delay: "y7", loss: "y8" };

describe("latencyTraces", () => {
  it("draws each direction's one-way median with the clocks' error and its loss on its own row", () => {
    const traces = latencyTraces([point("2026-12-04T10:00:00Z"), point("2026-12-04T10:01:00Z")], 60, DIRECTIONS, AXES);
    expect(traces.map((trace) => trace.name ?? null)).toEqual([
      null, "uplink → ground one-way min–p90", "uplink → ground one-way median",
      null, "ground → uplink one-way min–p90", "ground → uplink one-way median",
      "uplink → ground loss", "ground → uplink loss",
    ]);
    const median = traces[2] as { y: (number | null)[]; error_y: { array: (number | null)[] }; yaxis: string };
    expect(median.y).toEqual([20.08, 20.08]);
    expect(median.error_y.array).toEqual([0.002, 0.002]);
    expect(median.yaxis).toBe("y7");
    const loss = traces[6] as { y: (number | null)[]; yaxis: string };
    expect(loss.y[0]).toBeCloseTo((12 / 580) * 100);
    expect(loss.yaxis).toBe("y8");
    expect((traces[7] as { y: (number | null)[] }).y).toEqual([0, 0]);
  });

  it("leaves out one-way figures whose clocks are not trusted and draws the round trip there instead", () => {
    const untrusted = point("2026-12-04T10:01:00Z", { one_way_trusted: false, clock_error_ms: 40 });
    const points = [point("2026-12-04T10:00:00Z"), untrusted];
    const traces = latencyTraces(points, 60, DIRECTIONS, AXES);
    const median = traces[2] as { y: (number | null)[] };
    expect(median.y).toEqual([20.08, null]);
    const roundTrip = traces.find((trace) => trace.name?.startsWith("round trip")) as { y: (number | null)[] };
    expect(roundTrip.y).toEqual([null, 25.13]);
  });

  it("breaks its lines where no interval came back", () => {
    const traces = latencyTraces([point("2026-12-04T10:00:00Z"), point("2026-12-04T10:10:00Z")], 60, DIRECTIONS, AXES);
    expect((traces[2] as { y: (number | null)[] }).y).toEqual([20.08, null, 20.08]);
  });

  it("leaves out a direction a one-way-only test does not measure", () => {
    const oneWay = point("2026-12-04T10:00:00Z", {
      backward_lost: null, backward_loss_fraction: null, backward_min_ms: null, backward_p50_ms: null,
      backward_p90_ms: null, backward_p99_ms: null, backward_max_ms: null,
    });  // prettier-ignore
    const names = latencyTraces([oneWay], 60, DIRECTIONS, AXES).map((trace) => trace.name ?? null);
    expect(names).toEqual([null, "uplink → ground one-way min–p90", "uplink → ground one-way median", "uplink → ground loss"]);
  });
});
