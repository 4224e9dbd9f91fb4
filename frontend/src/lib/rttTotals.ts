// The RTT figures above a history chart (lowest RTT, latest median, loss), from the RTT points of
// a path's or a target's history.
export interface RttPoint {
  min: number | null;
  p50: number | null;
  sent: number;
  lost: number;
}

export interface RttTotals {
  minRttMs: number | null;
  latestMedianMs: number | null;
  lossFraction: number | null;
  sent: number;
  lost: number;
}

export function rttTotals(points: readonly RttPoint[]): RttTotals {
  const mins = points.map((point) => point.min).filter((value): value is number => value !== null);
  const sent = points.reduce((sum, point) => sum + point.sent, 0);
  const lost = points.reduce((sum, point) => sum + point.lost, 0);
  return {
    minRttMs: mins.length > 0 ? Math.min(...mins) : null,
    latestMedianMs: points.at(-1)?.p50 ?? null,
    lossFraction: sent > 0 ? lost / sent : null,
    sent,
    lost,
  };
}
