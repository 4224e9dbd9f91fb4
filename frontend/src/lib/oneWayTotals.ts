// The headline one-way figures of a path's latency series: the newest interval's median each
// way, and each direction's loss over the range. Intervals that overlapped Fathom's own
// throughput tests are left out (they see the queue the test builds), as the Paths list and
// the grid leave them out.
import type { LatencyPoint } from "../api/latencyQueries";

export interface OneWayTotals {
  /** The newest interval whose clocks allowed one-way figures; null: none did. */
  forwardMedianMs: number | null;
  backwardMedianMs: number | null;
  /** The newest round-trip median, for when no interval's clocks allowed one-way figures. */
  roundTripMedianMs: number | null;
  /** lost / sent (forward), lost / reached the far end (backward); null: not measured. */
  forwardLoss: number | null;
  backwardLoss: number | null;
  /** Test packets sent in the unloaded points (the loss figures' base). */
  sent: number;
}

function newest(points: readonly LatencyPoint[], value: (point: LatencyPoint) => number | null): number | null {
  for (let index = points.length - 1; index >= 0; index -= 1) {
    const point = points[index];
    const figure = point === undefined ? null : value(point);
    if (figure !== null) {
      return figure;
    }
  }
  return null;
}

export function oneWayTotals(points: readonly LatencyPoint[]): OneWayTotals {
  const unloaded = points.filter((point) => !point.loaded);
  const trusted = unloaded.filter((point) => point.one_way_trusted);
  let sent = 0;
  let forwardLost = 0;
  let reached = 0;
  let backwardLost = 0;
  let backwardMeasured = false;
  for (const point of unloaded) {
    sent += point.sent;
    forwardLost += point.forward_lost;
    if (point.backward_lost !== null) {
      backwardMeasured = true;
      reached += point.sent - point.forward_lost;
      backwardLost += point.backward_lost;
    }
  }
  return {
    forwardMedianMs: newest(trusted, (point) => point.forward_p50_ms),
    backwardMedianMs: newest(trusted, (point) => point.backward_p50_ms),
    roundTripMedianMs: newest(unloaded, (point) => point.round_trip_p50_ms),
    forwardLoss: sent > 0 ? forwardLost / sent : null,
    backwardLoss: backwardMeasured && reached > 0 ? backwardLost / reached : null,
    sent,
  };
}
