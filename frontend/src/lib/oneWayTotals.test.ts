import { describe, expect, it } from "vitest";

import type { LatencyPoint } from "../api/latencyQueries";
import { oneWayTotals } from "./oneWayTotals";

function point(changes: Partial<LatencyPoint>): LatencyPoint {
  return {
    time: "2026-11-22T11:00:00Z", sent: 600, answered: 594, forward_lost: 4, backward_lost: 2,
    forward_loss_fraction: 4 / 600, backward_loss_fraction: 2 / 596, forward_min_ms: 20, forward_p50_ms: 20.1,
    forward_p90_ms: 20.2, forward_p99_ms: 20.4, forward_max_ms: 21, backward_min_ms: 5, backward_p50_ms: 5.1,
    backward_p90_ms: 5.2, backward_p99_ms: 5.3, backward_max_ms: 5.6, round_trip_min_ms: 25, round_trip_p50_ms: 25.2,
    round_trip_p99_ms: 25.6, clock_error_ms: 0.002, one_way_trusted: true, loaded: false, ...changes,
  };  // prettier-ignore
}

describe("oneWayTotals", () => {
  it("takes the newest trusted medians and each direction's loss, leaving loaded intervals out", () => {
    const totals = oneWayTotals([
      point({}),
      point({ time: "2026-11-22T11:01:00Z", forward_p50_ms: 22, backward_p50_ms: 6 }),
      // Clocks out of sync: no one-way median from it, but its loss counts.
      point({ time: "2026-11-22T11:02:00Z", one_way_trusted: false, forward_p50_ms: 99, round_trip_p50_ms: 30 }),
      // During Fathom's own throughput test: left out of the loss.
      point({ time: "2026-11-22T11:03:00Z", loaded: true, forward_lost: 300, backward_lost: 100 }),
    ]);
    expect(totals.forwardMedianMs).toBe(22);
    expect(totals.backwardMedianMs).toBe(6);
    expect(totals.roundTripMedianMs).toBe(30);
    expect(totals.forwardLoss).toBeCloseTo(12 / 1800, 12);
    // The way back counts the packets that reached the far end.
    expect(totals.backwardLoss).toBeCloseTo(6 / (1800 - 12), 12);
    expect(totals.sent).toBe(1800);
  });

  it("has no way back for a one-way-only test and no figures without intervals", () => {
    const oneWay = oneWayTotals([point({ backward_lost: null, backward_p50_ms: null, round_trip_p50_ms: null })]);
    expect(oneWay.backwardLoss).toBeNull();
    expect(oneWay.backwardMedianMs).toBeNull();
    expect(oneWay.forwardLoss).toBeCloseTo(4 / 600, 12);
    const none = oneWayTotals([]);
    expect([none.forwardMedianMs, none.forwardLoss, none.backwardLoss, none.sent]).toEqual([null, null, null, 0]);
    const allLoaded = oneWayTotals([point({ loaded: true })]);
    expect([allLoaded.forwardLoss, allLoaded.sent]).toEqual([null, 0]);
  });
});
