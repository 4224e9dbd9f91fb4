// The analysis of one path, below its RTT chart: throughput against its ceilings, what
// limits it, RTT modes, advice and a capacity plan, and findings. One query feeds every
// panel; each panel still loads, fails and explains its emptiness on its own.
import { useMemo, useState, type ReactNode, type SubmitEvent } from "react";
import type { UseQueryResult } from "@tanstack/react-query";

import {
  useChoices,
  usePathAnalysis,
  type Choice,
  type Finding,
  type PathAnalysis,
  type RttMode,
  type RunAnalysis,
} from "../api/queries";
import { Panel } from "../components/Panel";
import { PlotlyChart } from "../components/PlotlyChart";
import { LoadError, Loading } from "../components/QueryState";
import { ChoiceBadge } from "../components/StatusBadge";
import {
  BYTES_PER_TIB,
  TERM_NAMES,
  TERM_TITLES,
  formatFraction,
  formatMagnitude,
  parseCeilingSet,
  parseGoalGbps,
  parseRunCeilings,
  parseRunEvidence,
  parseTimeModes,
  parseVolumeTib,
  termTitle,
  type Buffers,
  type CeilingSet,
  type CeilingTerm,
  type ParsedInput,
  type RunCeilings,
  type TermName,
  type TimeModes,
} from "../lib/analysis";
import { ceilingLayout, ceilingTraces } from "../lib/ceilingTraces";
import { formatBytes, formatMs, formatPercent, formatRate, formatUtc } from "../lib/format";

type AnalysisQuery = UseQueryResult<PathAnalysis>;

const NO_RUN_HINT =
  "No throughput run analysed yet: the default mesh runs one every 6 h, and each is analysed within a minute " +
  "of arriving. For runs from before the analysis existed, run python manage.py analyze --hours 24 on the server.";

/** The shared query's loading and error states, in the words of one panel. */
function AnalysisState({
  analysis,
  what,
  children,
}: {
  analysis: AnalysisQuery;
  what: string;
  children: (data: PathAnalysis) => ReactNode;
}) {
  if (analysis.isPending) {
    return <Loading what={what} />;
  }
  if (analysis.isError) {
    return <LoadError what={what} error={analysis.error} />;
  }
  return <div className={analysis.isPlaceholderData ? "stale" : undefined}>{children(analysis.data)}</div>;
}

function CeilingChart({ data, diagnoses }: { data: PathAnalysis; diagnoses: readonly Choice[] | undefined }) {
  const traces = useMemo(
    () => ceilingTraces(data.runs, data.ceilings_now, diagnoses),
    [data.runs, data.ceilings_now, diagnoses],
  );
  const layout = useMemo(() => ceilingLayout(), []);
  if (data.runs.length === 0) {
    return (
      <p className="muted" data-testid="ceiling-empty">
        {NO_RUN_HINT}
      </p>
    );
  }
  return (
    <>
      <p className="muted">
        The last {data.runs.length} throughput {data.runs.length === 1 ? "run" : "runs"}, coloured by diagnosis; the
        solid line is each run&apos;s ceiling at its minimum RTT, dashed lines are today&apos;s ceiling per RTT mode.
      </p>
      <PlotlyChart
        data={traces}
        layout={layout}
        uiRevision={`${data.source.id}/${data.destination.id}`}
        height={380}
        testId="ceiling-chart"
      />
    </>
  );
}

function RunSummary({ run, diagnoses }: { run: RunAnalysis; diagnoses: readonly Choice[] | undefined }) {
  const evidence = parseRunEvidence(run.evidence);
  return (
    <>
      <p>
        <ChoiceBadge choices={diagnoses} value={run.diagnosis} />{" "}
        <span className="muted">
          newest run {formatUtc(run.started_at)}, {run.streams} {run.streams === 1 ? "stream" : "streams"}
          {run.iperf3_version !== "" && `, iperf3 ${run.iperf3_version}`}
        </span>
      </p>
      <dl className="figures">
        <div>
          <dt>Rate</dt>
          <dd>{formatRate(run.rate_bps)}</dd>
        </div>
        <div>
          <dt>Ceiling</dt>
          <dd>{formatRate(run.ceiling_bps)}</dd>
        </div>
        <div>
          <dt>Share of ceiling</dt>
          <dd>{formatPercent(run.fraction_of_ceiling)}</dd>
        </div>
        <div>
          <dt>Smallest term</dt>
          <dd>{termTitle(run.limit)}</dd>
        </div>
      </dl>
      {evidence.notConverged && (
        <p className="warning" role="note">
          The rate was still rising at the end of the run: it may be too short to leave slow start. Lengthen the
          throughput test&apos;s <code>duration_s</code> or its <code>omit_s</code>.
        </p>
      )}
      {evidence.sentences.length > 0 ? (
        <ul className="evidence">
          {evidence.sentences.map((sentence, index) => (
            <li key={index}>{sentence}</li>
          ))}
        </ul>
      ) : (
        <p className="muted">The diagnosis came with no evidence sentences.</p>
      )}
    </>
  );
}

/** One term for a table cell: its rate, or why it is unknown. */
function termText(term: CeilingTerm): string {
  if (term.rateBps !== null) {
    return formatRate(term.rateBps);
  }
  return term.reason === "" ? "unknown" : `unknown — ${term.reason}`;
}

function TermRow({
  name,
  atMinRtt,
  underLoad,
}: {
  name: TermName;
  atMinRtt: CeilingSet;
  underLoad: CeilingSet | null;
}) {
  const winning = atMinRtt.limit === name;
  return (
    <tr className={winning ? "winning" : undefined} data-term={name}>
      <th scope="row">
        {TERM_TITLES[name]}
        {winning && <span className="flag"> limits</span>}
      </th>
      <td>{termText(atMinRtt.terms[name])}</td>
      {underLoad !== null && <td>{termText(underLoad.terms[name])}</td>}
    </tr>
  );
}

function rttHeading(set: CeilingSet): string {
  return set.rttMs === null ? "unknown RTT" : formatMs(set.rttMs);
}

function BufferRows({ buffers }: { buffers: Buffers }) {
  const rows: [string, string, string][] = [
    [
      "Receive buffer",
      buffers.receiveBytes === null ? "unknown" : formatBytes(buffers.receiveBytes),
      buffers.receiveSource,
    ],
    ["Receive window fraction", formatFraction(buffers.receiveFraction), buffers.receiveFractionSource],
    ["Send buffer", buffers.sendBytes === null ? "unknown" : formatBytes(buffers.sendBytes), buffers.sendSource],
    ["Send window fraction", formatFraction(buffers.sendFraction), buffers.sendFractionSource],
  ];
  return (
    <>
      {rows.map(([what, value, source]) => (
        <tr key={what}>
          <th scope="row">{what}</th>
          <td>{value}</td>
          <td className="muted">{source === "" ? "source not reported" : source}</td>
        </tr>
      ))}
    </>
  );
}

function CeilingsNow({ now }: { now: RunCeilings }) {
  const { atMinRtt, underLoad } = now;
  return (
    <>
      <h3>Ceilings with today&apos;s tuning</h3>
      {atMinRtt.limit === "unknown" && (
        <p className="warning" role="note">
          Every term is unknown, so nothing says what limits this path yet; each row says what is missing. The terms
          come from the agents&apos; host facts (link speed, MTU, <code>tcp_rmem</code>/<code>tcp_wmem</code>) and the
          path&apos;s pings: check the Agents page for missing host facts.
        </p>
      )}
      <table className="terms">
        <thead>
          <tr>
            <th>Term</th>
            <th>
              At {rttHeading(atMinRtt)}{" "}
              <span className="muted">({atMinRtt.rttSource === "" ? "RTT source not reported" : atMinRtt.rttSource})</span>
            </th>
            {underLoad !== null && (
              <th>
                Under load, at {rttHeading(underLoad)} <span className="muted">({underLoad.rttSource})</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {TERM_NAMES.map((name) => (
            <TermRow key={name} name={name} atMinRtt={atMinRtt} underLoad={underLoad} />
          ))}
        </tbody>
      </table>
      <h3>Where the window terms come from</h3>
      <table className="buffers">
        <tbody>
          <BufferRows buffers={now.buffers} />
        </tbody>
      </table>
    </>
  );
}

function LimitsPanel({ data, diagnoses }: { data: PathAnalysis; diagnoses: readonly Choice[] | undefined }) {
  const newest = data.runs[0];
  const now = parseRunCeilings(data.ceilings_now);
  return (
    <>
      {newest === undefined ? <p className="muted">{NO_RUN_HINT}</p> : <RunSummary run={newest} diagnoses={diagnoses} />}
      {now === null ? (
        newest !== undefined && (
          <p className="muted">
            No ceilings with today&apos;s tuning: the server could not compute them from the newest run. They return
            once the next throughput run is analysed.
          </p>
        )
      ) : (
        <CeilingsNow now={now} />
      )}
    </>
  );
}

function ModeRow({ mode, index }: { mode: RttMode; index: number }) {
  const ceiling = parseCeilingSet(mode.ceiling);
  let ceilingText = "—";
  if (ceiling !== null) {
    ceilingText =
      ceiling.ceilingBps === null
        ? "unknown"
        : `${formatRate(ceiling.ceilingBps)}${ceiling.limit === "unknown" ? "" : ` (${TERM_TITLES[ceiling.limit]})`}`;
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
  const levels = timeModes.levelsMs.map((level) => formatMs(level)).join(" → ");
  const changes = timeModes.changeTimes.map((time) => formatUtc(time)).join(", ");
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

function ModesPanel({ data, verdicts }: { data: PathAnalysis; verdicts: readonly Choice[] | undefined }) {
  const modes = data.modes;
  const dip = modes.ping_dip;
  const timeSentence = timeModesSentence(parseTimeModes(modes.time_modes));
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

/** A number the user types to re-ask the server; blank means the server's default. */
function SettingForm({
  label,
  unit,
  placeholder,
  parse,
  onApply,
}: {
  label: string;
  unit: string;
  placeholder: string;
  parse: (text: string) => ParsedInput;
  onApply: (value: number | null) => void;
}) {
  const [text, setText] = useState("");
  const [error, setError] = useState<string | null>(null);
  const submit = (event: SubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    const parsed = parse(text);
    if (parsed.ok) {
      setError(null);
      onApply(parsed.value);
    } else {
      setError(parsed.error);
    }
  };
  return (
    <form className="setting" onSubmit={submit}>
      <label>
        {label}{" "}
        <input
          type="number"
          step="any"
          min="0"
          value={text}
          placeholder={placeholder}
          onChange={(event) => {
            setText(event.target.value);
          }}
        />{" "}
        {unit}
      </label>{" "}
      <button type="submit">Apply</button>
      {error !== null && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}

/** A rate in Gbit/s for an input's placeholder: 10000000000 -> "10". */
function gbitText(bps: number | null): string {
  return bps === null ? "" : String(Math.round((bps / 1e9) * 1000) / 1000);
}

/** A volume in TiB for an input's placeholder. */
function tibText(bytes: number | null): string {
  return bytes === null ? "" : String(Math.round((bytes / BYTES_PER_TIB) * 100) / 100);
}

function AdviceTable({ data }: { data: PathAnalysis }) {
  if (data.advice.length === 0) {
    return (
      <p className="muted">
        {data.runs.length === 0
          ? "No advice yet: it is sized from the newest throughput run and both hosts' tuning. " + NO_RUN_HINT
          : `Nothing to change for a goal of ${formatRate(data.goal_bps)}: the diagnosis asks for no setting. ` +
            "Raise the goal to see what it would take."}
      </p>
    );
  }
  return (
    <table className="advice">
      <thead>
        <tr>
          <th>Where</th>
          <th>Setting</th>
          <th>Value</th>
          <th>Why</th>
        </tr>
      </thead>
      <tbody>
        {data.advice.map((item, index) => (
          <tr key={index}>
            <td>{item.where}</td>
            <td>
              <code>{item.setting}</code> <span className="muted">({item.kind})</span>
            </td>
            <td>
              <code>{item.value}</code>
            </td>
            <td>{item.reason}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A backlog that does not grow: "no", or "–" when unknown (a growing one is flagged by the caller). */
function noOrDash(value: false | null): string {
  return value === null ? "–" : "no";
}

function CapacityFigures({ data }: { data: PathAnalysis }) {
  const plan = data.capacity_plan;
  return (
    <>
      <p>{plan.reason}</p>
      <dl className="figures">
        <div>
          <dt>Daily volume</dt>
          <dd>{formatBytes(plan.daily_volume_bytes)}</dd>
        </div>
        <div>
          <dt>Needs</dt>
          <dd>{formatRate(plan.required_bps)}</dd>
        </div>
        <div>
          <dt>Hours a day</dt>
          <dd>{plan.hours_per_day === null ? "–" : `${plan.hours_per_day.toFixed(1)} h`}</dd>
        </div>
        <div>
          <dt>Streams needed</dt>
          <dd>{plan.streams_needed ?? "–"}</dd>
        </div>
        <div>
          <dt>Backlog grows</dt>
          <dd>{plan.backlog_grows === true ? <strong className="flag">yes</strong> : noOrDash(plan.backlog_grows)}</dd>
        </div>
      </dl>
      {plan.rate_bps === null && <p className="muted">{NO_RUN_HINT}</p>}
      {plan.notes.length > 0 && (
        <ul className="evidence">
          {plan.notes.map((note, index) => (
            <li key={index}>{note}</li>
          ))}
        </ul>
      )}
    </>
  );
}

function FindingRow({ finding, states }: { finding: Finding; states: readonly Choice[] | undefined }) {
  return (
    <tr>
      <td>
        {finding.metric}
        {finding.rules.length > 0 && <div className="muted">{finding.rules.join(", ")}</div>}
      </td>
      <td>{finding.direction}</td>
      <td className="number">{formatMagnitude(finding.magnitude, finding.unit)}</td>
      <td>
        <ChoiceBadge choices={states} value={finding.state} />
      </td>
      <td>{finding.kind}</td>
      <td className="nowrap">{formatUtc(finding.started_at)}</td>
      <td className="nowrap">{formatUtc(finding.detected_at)}</td>
      <td className="nowrap">{finding.cleared_at === null ? "–" : formatUtc(finding.cleared_at)}</td>
      <td>{finding.annotation === "" ? <span className="muted">–</span> : finding.annotation}</td>
    </tr>
  );
}

function FindingsTable({ data, states }: { data: PathAnalysis; states: readonly Choice[] | undefined }) {
  if (data.findings.length === 0) {
    return (
      <p className="muted">
        No findings on this path. Every minute Fathom re-runs its regression rules on paths with new data, and opens a
        finding when throughput, RTT, loss or the route moves away from its baseline.
      </p>
    );
  }
  return (
    <table className="findings">
      <thead>
        <tr>
          <th>Metric</th>
          <th>Direction</th>
          <th className="number">Magnitude</th>
          <th>State</th>
          <th>Kind</th>
          <th>Started</th>
          <th>Detected</th>
          <th>Cleared</th>
          <th>Annotation</th>
        </tr>
      </thead>
      <tbody>
        {data.findings.map((finding) => (
          <FindingRow key={finding.id} finding={finding} states={states} />
        ))}
      </tbody>
    </table>
  );
}

/** The analysis panels of one path; the goal rate and daily volume re-ask the server. */
export function PathAnalysisSection({ source, destination }: { source: string; destination: string }) {
  const [goalBps, setGoalBps] = useState<number | null>(null);
  const [dailyVolumeBytes, setDailyVolumeBytes] = useState<number | null>(null);
  const analysis = usePathAnalysis(source, destination, { goalBps, dailyVolumeBytes });
  const choices = useChoices();
  const diagnoses = choices.data?.diagnosis;

  return (
    <section className="analysis" aria-label="Analysis">
      <h2 className="section-heading">Analysis</h2>
      {choices.isError && <LoadError what="the diagnosis labels" error={choices.error} />}
      <Panel title="Throughput against its ceilings">
        <AnalysisState analysis={analysis} what="the throughput runs">
          {(data) => <CeilingChart data={data} diagnoses={diagnoses} />}
        </AnalysisState>
      </Panel>
      <Panel title="What limits this path">
        <AnalysisState analysis={analysis} what="the diagnosis">
          {(data) => <LimitsPanel data={data} diagnoses={diagnoses} />}
        </AnalysisState>
      </Panel>
      <Panel title="RTT modes">
        <AnalysisState analysis={analysis} what="the RTT modes">
          {(data) => <ModesPanel data={data} verdicts={choices.data?.rtt_mode_verdict} />}
        </AnalysisState>
      </Panel>
      <Panel title="Advice">
        <SettingForm
          label="Goal rate"
          unit="Gbit/s"
          placeholder={gbitText(analysis.data?.goal_bps ?? null)}
          parse={parseGoalGbps}
          onApply={setGoalBps}
        />
        <AnalysisState analysis={analysis} what="the advice">
          {(data) => (
            <>
              {data.goal_bps !== null && (
                <p className="muted">
                  Sized for {formatRate(data.goal_bps)}
                  {goalBps === null && " (the default: the slower host's link speed when known)"} over the slowest RTT mode.
                </p>
              )}
              <AdviceTable data={data} />
            </>
          )}
        </AnalysisState>
      </Panel>
      <Panel title="Capacity plan">
        <SettingForm
          label="Daily volume"
          unit="TiB"
          placeholder={tibText(analysis.data?.capacity_plan.daily_volume_bytes ?? null)}
          parse={parseVolumeTib}
          onApply={setDailyVolumeBytes}
        />
        <AnalysisState analysis={analysis} what="the capacity plan">
          {(data) => <CapacityFigures data={data} />}
        </AnalysisState>
      </Panel>
      <Panel title="Findings">
        <AnalysisState analysis={analysis} what="the findings">
          {(data) => <FindingsTable data={data} states={choices.data?.finding_state} />}
        </AnalysisState>
      </Panel>
    </section>
  );
}
