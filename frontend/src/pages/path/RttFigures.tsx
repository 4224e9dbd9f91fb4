// The RTT figures of a history (path or target): inside the page's <dl className="figures">,
// after whatever figures the page puts first.
import { formatDuration, formatMs, formatPercent } from "../../lib/format";
import type { RttTotals } from "../../lib/rttTotals";

export function RttFigures({ totals, bucketS }: { totals: RttTotals; bucketS: number }) {
  return (
    <>
      <div>
        <dt>Lowest RTT</dt>
        <dd>{formatMs(totals.minRttMs)}</dd>
      </div>
      <div>
        <dt>Latest median</dt>
        <dd>{formatMs(totals.latestMedianMs)}</dd>
      </div>
      <div>
        <dt>Loss</dt>
        <dd>
          {formatPercent(totals.lossFraction)}{" "}
          <span className="muted">
            ({totals.lost} of {totals.sent} packets)
          </span>
        </dd>
      </div>
      <div>
        <dt>Resolution</dt>
        <dd>{formatDuration(bucketS)}</dd>
      </div>
    </>
  );
}
