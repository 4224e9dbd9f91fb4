// The latency test's headline figures beside the RTT ones: the newest one-way median each way
// and each direction's loss over the range (see lib/oneWayTotals). Where no interval's clocks
// allowed one-way figures, the round trip stands in, as it does on the chart.
import type { LatencyPoint } from "../../api/latencyQueries";
import { formatMs, formatPercent } from "../../lib/format";
import { oneWayTotals } from "../../lib/oneWayTotals";

export function OneWayFigures({ points }: { points: readonly LatencyPoint[] }) {
  const totals = oneWayTotals(points);
  const oneWay = totals.forwardMedianMs !== null || totals.backwardMedianMs !== null;
  return (
    <>
      <div>
        <dt>One-way median</dt>
        <dd data-testid="one-way-median">
          {oneWay ? (
            <>
              → {formatMs(totals.forwardMedianMs)}
              {totals.backwardMedianMs !== null && <> · ← {formatMs(totals.backwardMedianMs)}</>}
            </>
          ) : totals.roundTripMedianMs !== null ? (
            <>
              {formatMs(totals.roundTripMedianMs)} <span className="muted">(round trip: clocks not trusted)</span>
            </>
          ) : (
            "–"
          )}
        </dd>
      </div>
      <div>
        <dt>One-way loss</dt>
        <dd data-testid="one-way-loss">
          → {formatPercent(totals.forwardLoss)}
          {totals.backwardLoss !== null && <> · ← {formatPercent(totals.backwardLoss)}</>}{" "}
          <span className="muted">(of {totals.sent} packets outside Fathom&apos;s own tests)</span>
        </dd>
      </div>
    </>
  );
}
