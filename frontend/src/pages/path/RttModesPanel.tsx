// "RTT modes": the ECMP verdict of the flow sweeps, each mode with its share of flows, its
// traceroute path and its ceiling, the ping dip test and RTT levels that followed in time.
import type { Choice, PathAnalysis, RttMode, TimeModes } from "../../api/queries";
import { Panel } from "../../components/Panel";
import { ChoiceBadge } from "../../components/StatusBadge";
import { TERM_TITLES } from "../../lib/analysis";
import { formatMs, formatPercent, formatRate, formatUtc } from "../../lib/format";
import { AnalysisState, type AnalysisQuery } from "./AnalysisState";

function ModeRow({ mode, index }: { mode: RttMode; index: number }) {
  const { ceiling } = mode;
  let ceilingText = "—";
  if (ceiling !== null) {
    ceilingText =
      ceiling.ceiling_bps === null
        ? "unknown"
        : `${formatRate(ceiling.ceiling_bps)}${ceiling.limit === "unknown" ? "" : ` (${TERM_TITLES[ceiling.limit]})`}`;
  }
  const tracePath = mode.trace_path ?? [];
  return (
    <tr>
      <td className="number">{index + 1}</td>
      <td className="number">
        {formatMs(mode.rtt_ms)} <span className="muted">(min {formatMs(mode.min_rtt_ms)})</span>
      </td>
      <td className="number">
        {formatPercent(mode.share)}{" "}
        <span className="muted">
          ({mode.flow_count} {mode.flow_count === 1 ? "flow" : "flows"})
        </span>
      </td>
      <td>{tracePath.length > 0 ? tracePath.join(" → ") : "—"}</td>
      <td>{ceilingText}</td>
    </tr>
  );
}

const TIME_MODE_KINDS: Record<Exclude<TimeModes["kind"], "none">, string> = {
  route_change: "a route change",
  congestion: "congestion",
};

/** A sentence on RTT levels that followed each other in time; null when there were none. */
function timeModesSentence(timeModes: TimeModes): string | null {
  if (timeModes.kind === "none") {
    return null;
  }
  const levels = timeModes.levels_ms.map((level) => formatMs(level)).join(" → ");
  const changes = timeModes.change_times.map((time) => formatUtc(time)).join(", ");
  const parts = [`Over time the base RTT moved between levels (${TIME_MODE_KINDS[timeModes.kind]})`];
  if (levels !== "") {
    parts.push(`: ${levels}`);
  }
  if (changes !== "") {
    parts.push(`, changing at ${changes}`);
  }
  parts.push(".");
  if (timeModes.reason !== "") {
    parts.push(` ${timeModes.reason}`);
  }
  return parts.join("");
}

function formatPValue(p: number | null): string {
  return p === null ? "no p-value" : `p = ${p < 0.001 ? p.toExponential(1) : p.toPrecision(2)}`;
}

function RttModes({ data, verdicts }: { data: PathAnalysis; verdicts: readonly Choice[] | undefined }) {
  const modes = data.modes;
  const dip = modes.ping_dip;
  const timeSentence = timeModesSentence(modes.time_modes);
  return (
    <>
      <p>
        <ChoiceBadge choices={verdicts} value={modes.verdict} />{" "}
        <span className="muted">
          {modes.sweep_started_at === null
            ? "no decisive flow sweep in the last 24 h"
            : `${modes.held_by_sweeps > 0 ? "modes of the sweep" : "newest sweep"} ${formatUtc(modes.sweep_started_at)}; ` +
              `${modes.ecmp_sweeps} of ${modes.sweeps} sweeps in the last 24 h saw more than one mode`}
        </span>
      </p>
      {modes.reason !== "" && <p>{modes.reason}</p>}
      {modes.held_by_sweeps > 0 && <p className="muted">{modes.choice}</p>}
      {modes.modes.length === 0 ? (
        <p className="muted">
          No RTT modes to show. A flow sweep sends probes from many source ports to find ECMP members; the default
          mesh runs one every 15 min. If this path&apos;s mesh has no <code>flowsweep</code> test, add one.
        </p>
      ) : (
        <table className="modes">
          <thead>
            <tr>
              <th className="number">Mode</th>
              <th className="number">RTT</th>
              <th className="number">Share of flows</th>
              <th>Traceroute path</th>
              <th>Ceiling of this mode</th>
            </tr>
          </thead>
          <tbody>
            {modes.modes.map((mode, index) => (
              <ModeRow key={index} mode={mode} index={index} />
            ))}
          </tbody>
        </table>
      )}
      <p>
        Ping dip test over 24 h ({dip.samples} samples, {formatPValue(dip.p_value)}):{" "}
        {dip.candidate ? <strong>a candidate for a second RTT mode</strong> : "no sign of a second RTT mode"}
        {dip.reason !== "" && <span className="muted"> — {dip.reason}</span>}
      </p>
      {timeSentence !== null && <p data-testid="time-modes">{timeSentence}</p>}
    </>
  );
}

export function RttModesPanel({
  analysis,
  verdicts,
}: {
  analysis: AnalysisQuery;
  verdicts: readonly Choice[] | undefined;
}) {
  return (
    <Panel title="RTT modes">
      <AnalysisState analysis={analysis} what="the RTT modes">
        {(data) => <RttModes data={data} verdicts={verdicts} />}
      </AnalysisState>
    </Panel>
  );
}
