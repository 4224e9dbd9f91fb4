// The head of the path page: the range picker (1 hour to 1 year, or custom; kept in the URL
// with any zoom, so a link shows the same view) and the path's history on one shared time
// axis: throughput both ways, retransmits, RTT percentiles and loss, failed runs and findings;
// from the path's timeline, every run with its ceilings, ECMP modes, tuning and iperf3 changes,
// and findings whose marker opens their evidence.
import { useCallback, useMemo, useState } from "react";
import type { PlotMouseEvent } from "plotly.js";
import { Link, useSearchParams } from "react-router-dom";

import { usePathFindings, usePathHistory } from "../../api/historyQueries";
import { usePathLatency } from "../../api/latencyQueries";
import { useFailedRuns } from "../../api/perfsonarQueries";
import { useAgents, useChoices } from "../../api/queries";
import { usePathTimeline, type PathTimeline } from "../../api/timelineQueries";
import { PlotlyChart } from "../../components/PlotlyChart";
import { FamilyTag } from "../../components/FamilyTag";
import { LoadError, Loading } from "../../components/QueryState";
import { familyLabel, sharedFamilies, type Family } from "../../lib/family";
import { formatDuration, formatRate, formatUtc } from "../../lib/format";
import { historyFigure, type PathHistory } from "../../lib/historyFigure";
import {
  HISTORY_RANGES,
  explicitRangeParams,
  namedRangeParams,
  type HistoryRange,
} from "../../lib/historyRange";
import { rttTotals } from "../../lib/rttTotals";
import { clickedFinding } from "../../lib/timelineTraces";
import { useRangeZoom } from "../../lib/useRangeZoom";
import { pathHref } from "../PathsPage";
import { FindingEvidence } from "./FindingEvidence";
import { OneWayFigures } from "./OneWayFigures";
import { RttFigures } from "./RttFigures";

const CHART_HEIGHT = 640;
// A chart of the latency rows alone (no runs, no pings): its margins and legend.
const LATENCY_ONLY_BASE = 150;
// The rows the timeline adds (changes, ECMP share) get room of their own.
const CHANGES_ROW_HEIGHT = 50;
const SHARE_ROW_HEIGHT = 80;
const LATENCY_ROWS_HEIGHT = 280;
const FINDING_MARGIN_MS = 3600 * 1000;

function timelineNotes(timeline: PathTimeline | undefined): string[] {
  if (timeline === undefined) {
    return [];
  }
  const notes: string[] = [];
  if (timeline.forward.runs_capped || timeline.reverse.runs_capped) {
    notes.push(
      `Showing the newest ${timeline.run_cap.toLocaleString("en")} runs of each direction; zoom in to see older ones.`,
    );
  }
  if (timeline.forward.sweeps_capped) {
    notes.push(
      `ECMP modes: one flow sweep in each 1/${timeline.run_cap.toLocaleString("en")} of the range (its newest); zoom in to see them all.`,
    );
  }
  if (timeline.tuning_capped || timeline.findings_capped) {
    notes.push("Only the newest tuning changes and findings of this range are marked; zoom in for the others.");
  }
  if (timeline.own_load_capped) {
    notes.push("Only the newest of Fathom's own throughput tests are greyed; zoom in for the others.");
  }
  return notes;
}

/** What the figures above the chart say of the range. */
export function historySummary(history: PathHistory) {
  const latest = (points: PathHistory["throughput"]) =>
    [...points].reverse().find((point) => point.median_bps !== null)?.median_bps ?? null;
  return {
    ...rttTotals(history.rtt),
    forwardBps: latest(history.throughput),
    reverseBps: latest(history.reverse.throughput),
    empty: history.rtt.length === 0 && history.throughput.length === 0 && history.reverse.throughput.length === 0,
  };
}

function toLocalInput(date: Date): string {
  return date.toISOString().slice(0, 16);
}

/** Two UTC times and Apply: the custom range. */
function CustomRange({ range, onApply }: { range: HistoryRange; onApply: (from: Date, to: Date) => void }) {
  const [from, setFrom] = useState(toLocalInput(range.from));
  const [to, setTo] = useState(toLocalInput(range.to));
  const [error, setError] = useState<string | null>(null);
  return (
    <form
      className="custom-range"
      onSubmit={(event) => {
        event.preventDefault();
        const start = new Date(`${from}Z`);
        const end = new Date(`${to}Z`);
        if (Number.isNaN(start.getTime()) || Number.isNaN(end.getTime())) {
          setError("Both ends need a date and a time.");
        } else if (start >= end) {
          setError("The range must end after it starts.");
        } else {
          setError(null);
          onApply(start, end);
        }
      }}
    >
      <label>
        From (UTC){" "}
        <input type="datetime-local" value={from} onChange={(event) => { setFrom(event.target.value); }} />
      </label>{" "}
      <label>
        to{" "}
        <input type="datetime-local" value={to} onChange={(event) => { setTo(event.target.value); }} />
      </label>{" "}
      <button type="submit">Show</button>
      {error !== null && (
        <span className="error" role="alert">
          {" "}
          {error}
        </span>
      )}
    </form>
  );
}

/** The pair's other family, when both agents have an address in it (a dual-stack pair). */
function useOtherFamily(source: string, destination: string, family: number): Family | null {
  const agents = useAgents();
  const a = agents.data?.find((agent) => agent.id === source);
  const b = agents.data?.find((agent) => agent.id === destination);
  if (a === undefined || b === undefined) {
    return null;
  }
  return sharedFamilies(a, b).find((other) => other !== family) ?? null;
}

export function HistorySection({
  source,
  destination,
  range,
  family = 4,
}: {
  source: string;
  destination: string;
  range: HistoryRange;
  /** The path's address family: a dual-stack pair's IPv4 and IPv6 are two paths. */
  family?: number;
}) {
  const [params, setParams] = useSearchParams();
  const history = usePathHistory(source, destination, range.from, range.to, range.live, family);
  const failed = useFailedRuns(source, destination, range.backS, family);
  const findings = usePathFindings(source, destination, range.from, range.to, range.live, family);
  const timeline = usePathTimeline(source, destination, range.from, range.to, range.live, family);
  const latency = usePathLatency(source, destination, range.from, range.to, range.live, family);
  const otherFamily = useOtherFamily(source, destination, family);
  const choices = useChoices();
  const figure = useMemo(
    () =>
      history.data === undefined
        ? null
        : historyFigure(
            history.data,
            failed.data ?? [],
            findings.data ?? [],
            timeline.data ?? null,
            choices.data,
            latency.data ?? null,
          ),
    [history.data, failed.data, findings.data, timeline.data, choices.data, latency.data],
  );
  // A click on a finding's marker opens its evidence below the chart; its id goes in the URL.
  const onClick = useCallback(
    (event: PlotMouseEvent) => {
      const id = clickedFinding(event.points);
      if (id !== null) {
        const next = new URLSearchParams(params);
        next.set("finding", String(id));
        setParams(next, { replace: true });
      }
    },
    [params, setParams],
  );
  const onRelayout = useRangeZoom(range.key);

  if (history.isPending) {
    return <Loading what="the path's history" />;
  }
  if (history.isError) {
    return <LoadError what="the path's history" error={history.error} />;
  }
  const data = history.data;
  const summary = historySummary(data);
  // A path measured by a latency test alone (a perfSONAR node's latencybg, or an agent pair
  // whose mesh has no ping) has no rollups: its one-way rows are still its measurements.
  const measuredOneWay = (latency.data?.points.length ?? 0) > 0;
  const reverseParams = new URLSearchParams(params);
  reverseParams.delete("finding");
  const chosenId = Number(params.get("finding") ?? "");
  const chosen = timeline.data?.findings.find((finding) => finding.id === chosenId) ?? null;
  const closeFinding = () => {
    const next = new URLSearchParams(params);
    next.delete("finding");
    setParams(next, { replace: true });
  };
  const height =
    (figure?.layout.yaxis === undefined && figure?.layout.yaxis7 !== undefined ? LATENCY_ONLY_BASE : CHART_HEIGHT) +
    (figure?.layout.yaxis5 === undefined ? 0 : CHANGES_ROW_HEIGHT) +
    (figure?.layout.yaxis6 === undefined ? 0 : SHARE_ROW_HEIGHT) +
    (figure?.layout.yaxis7 === undefined ? 0 : LATENCY_ROWS_HEIGHT);
  const latencyLimit = latency.data?.clock_error_limit_ms;
  return (
    <section>
      <p className="crumbs">
        <Link to="/paths">Paths</Link> /
      </p>
      <h1>
        {data.source.name} → {data.destination.name} <FamilyTag family={family} />
      </h1>
      <p className="muted">
        Measured by {data.source.name} towards {data.destination.name} over {familyLabel(family)}, and the reverse
        direction&apos;s throughput beside it.{" "}
        <Link to={pathHref(destination, source, family, reverseParams)}>
          Reverse direction ({data.destination.name} → {data.source.name})
        </Link>
        {otherFamily !== null && (
          <>
            {" "}
            ·{" "}
            <Link to={pathHref(source, destination, otherFamily, reverseParams)}>
              The same pair over {familyLabel(otherFamily)}
            </Link>
          </>
        )}
      </p>

      <div className="toolbar" role="group" aria-label="Time range">
        {HISTORY_RANGES.map((option) => (
          <button
            key={option.key}
            type="button"
            aria-pressed={range.key === option.key}
            onClick={() => {
              setParams(namedRangeParams(params, option.key));
            }}
          >
            {option.label}
          </button>
        ))}
        {history.isFetching && <span className="muted">refreshing…</span>}
      </div>
      <CustomRange
        key={`${range.from.toISOString()}/${range.to.toISOString()}`}
        range={range}
        onApply={(from, to) => {
          setParams(explicitRangeParams(params, from, to));
        }}
      />
      {range.problem !== null && (
        <p className="warning" role="note">
          {range.problem}
        </p>
      )}

      <dl className="figures">
        <div>
          <dt>Throughput now</dt>
          <dd>
            {formatRate(summary.forwardBps)} <span className="muted">(reverse {formatRate(summary.reverseBps)})</span>
          </dd>
        </div>
        <RttFigures totals={summary} bucketS={data.bucket_s} />
        {measuredOneWay && <OneWayFigures points={latency.data?.points ?? []} />}
      </dl>

      {summary.empty && !measuredOneWay && (failed.data ?? []).length === 0 ? (
        <p className="muted" data-testid="history-empty">
          No measurements of this path between {formatUtc(data.from)} and {formatUtc(data.to)}
          {range.key === null ? "" : ` (${range.label})`}. Choose a longer range, or check that a mesh with this path
          is enabled.
        </p>
      ) : (
        <>
          {summary.empty && !measuredOneWay && (
            <p className="warning" role="note" data-testid="history-only-failed">
              Every run in this range failed: the crosses on the throughput row give each one&apos;s reason.
            </p>
          )}
          {timelineNotes(timeline.data).map((note) => (
            <p key={note} className="warning" role="note" data-testid="timeline-capped">
              {note}
            </p>
          ))}
          {timeline.isError && (
            <p className="warning" role="note">
              The runs, ceilings and changes could not be loaded ({timeline.error.message}); the chart shows the
              rollups only.
            </p>
          )}
          {figure !== null && (
            <PlotlyChart
              data={figure.data}
              layout={figure.layout}
              height={height}
              uiRevision={`${source}/${destination}/${range.key ?? "custom"}`}
              testId="history-chart"
              onRelayout={onRelayout}
              onClick={onClick}
            />
          )}
          <p className="muted">
            One point per {formatDuration(data.bucket_s)} ({data.resolution} rollups), the axis spanning the data,
            and each throughput run as a marker: circles TCP, squares paced TCP, diamonds UDP; open for one stream,
            filled for several. Dashed steps are each run&apos;s ceiling at its min RTT with a band to the
            ceiling under load; dotted lines mark tuning (▼) and iperf3 (★) changes, shaded spans findings: click a
            finding&apos;s square for its evidence. Grey spans over the ping rows (on minute rollups) are Fathom&apos;s
            own throughput tests on either host: the analysis and the RTT band, median and loss leave the pings of those
            moments out, since they see the queue the test builds (the loss tooltip counts them).
            {figure?.layout.yaxis7 !== undefined && latencyLimit !== undefined && (
              <>
                {" "}
                The bottom rows are the latency test&apos;s one-way delay (median, min–p90 band) and loss in each
                direction; error bars are the two clocks&apos; declared error, and where it exceeds{" "}
                {latencyLimit} ms or a clock is not synchronized, the round trip stands in.
              </>
            )}{" "}
            Drag across any row to zoom all of them; double-click to zoom back out.
          </p>
          {chosen !== null && (
            <FindingEvidence
              finding={chosen}
              pathName={
                chosen.path_direction === "forward"
                  ? `${data.source.name} → ${data.destination.name}`
                  : `${data.destination.name} → ${data.source.name}`
              }
              onClose={closeFinding}
              onZoom={() => {
                const start = new Date(new Date(chosen.started_at).getTime() - FINDING_MARGIN_MS);
                const cleared = chosen.cleared_at === null ? Date.now() : new Date(chosen.cleared_at).getTime();
                const end = new Date(Math.min(cleared + FINDING_MARGIN_MS, Date.now()));
                setParams(explicitRangeParams(params, start, end));
              }}
            />
          )}
        </>
      )}
    </section>
  );
}
