import { Link } from "react-router-dom";

import type { PathListEntry } from "../../api/pathListQueries";
import { usePathSparks, type PathSpark, type SparkLookup } from "../../api/pathListQueries";
import type { Choice } from "../../api/queries";
import { FamilyTag } from "../../components/FamilyTag";
import { ChoiceBadge } from "../../components/StatusBadge";
import { Sparkline } from "../../components/Sparkline";
import { termTitle } from "../../lib/analysis";
import { formatAgo, formatMs, formatPercent, formatRate, formatUtc } from "../../lib/format";
import {
  isStale,
  pairParam,
  rttSparkLabel,
  runsSparkLabel,
  type PathListView,
  type SortKey,
} from "../../lib/pathList";
import { testKind } from "../../lib/testKinds";
import { pathHref } from "./pathHref";

export interface PathLabels {
  diagnoses: readonly Choice[] | undefined;
  statuses: readonly Choice[] | undefined;
}

// Intervals under Fathom's own throughput tests are left out, so a latency test can still show none.
const NO_ONE_WAY = "no latency interval without Fathom's own load in the last hour";

const COLUMNS: readonly { key: SortKey; title: string; hint: string; number?: boolean }[] = [
  { key: "path", title: "Path", hint: "source → destination" },
  { key: "rtt", title: "RTT", hint: "median of the last hour", number: true },
  { key: "loss", title: "Loss", hint: "pings lost in the last hour", number: true },
  {
    key: "forward_loss",
    title: "One-way →",
    hint: "loss source → destination in the last hour (latency tests, without Fathom's own load)",
    number: true,
  },
  {
    key: "backward_loss",
    title: "One-way ←",
    hint: "loss destination → source in the last hour (latency tests, without Fathom's own load)",
    number: true,
  },
  { key: "rate", title: "Throughput", hint: "newest analysed run of 31 days, and its ceiling", number: true },
  { key: "fraction", title: "Of ceiling", hint: "throughput / ceiling" },
  { key: "limit", title: "Limit", hint: "diagnosis, and the ceiling term that binds" },
  { key: "findings", title: "Findings", hint: "open alarms", number: true },
  { key: "age", title: "Data age", hint: "since the newest result of any test" },
];

function SortHeader({
  column,
  view,
  onSort,
}: {
  column: (typeof COLUMNS)[number];
  view: PathListView;
  onSort: (key: SortKey) => void;
}) {
  const active = view.sort === column.key;
  const arrow = active ? (view.direction === "asc" ? "▲" : "▼") : "";
  return (
    <th
      scope="col"
      className={column.number === true ? "number" : undefined}
      aria-sort={active ? (view.direction === "asc" ? "ascending" : "descending") : undefined}
      title={column.hint}
    >
      <button
        type="button"
        className={`sort${active ? " active" : ""}`}
        onClick={() => {
          onSort(column.key);
        }}
      >
        {column.title}
        <span className="sort-arrow" aria-hidden="true">
          {arrow}
        </span>
      </button>
    </th>
  );
}

/** The throughput against its ceiling as a bar; over 100 % (a ceiling estimate too low) shows full, flagged. */
function CeilingBar({ fraction }: { fraction: number | null }) {
  if (fraction === null) {
    return <span className="muted">–</span>;
  }
  const width = Math.max(0, Math.min(1, fraction)) * 100;
  return (
    <span className="ceiling-fraction">
      <span className={`share-bar${fraction > 1 ? " over" : ""}`} aria-hidden="true">
        <span style={{ width: `${width.toFixed(1)}%` }} />
      </span>
      {formatPercent(fraction)}
    </span>
  );
}

function SparkCell({ spark, sparks }: { spark: PathSpark | undefined; sparks: SparkLookup }) {
  if (spark === undefined) {
    if (sparks.error !== null) {
      return (
        <span className="muted" title={`Could not load the sparklines: ${sparks.error.message}`}>
          –
        </span>
      );
    }
    return <span className="muted">{sparks.isPending ? "…" : "–"}</span>;
  }
  return (
    <div className="sparks">
      <Sparkline label={rttSparkLabel(spark)} series={[{ values: spark.rtt_p50_ms, className: "spark-rtt" }]} />
      <Sparkline
        label={runsSparkLabel(spark)}
        zeroBased
        series={[
          { values: spark.runs.map((run) => run.ceiling_bps), className: "spark-ceiling" },
          { values: spark.runs.map((run) => run.rate_bps), className: "spark-rate" },
        ]}
      />
    </div>
  );
}

function PathRow({
  path,
  spark,
  sparks,
  labels,
  generatedAt,
}: {
  path: PathListEntry;
  spark: PathSpark | undefined;
  sparks: SparkLookup;
  labels: PathLabels;
  generatedAt: Date;
}) {
  const href = pathHref(path.source.id, path.destination.id, path.family);
  const stale = isStale(path);
  return (
    <tr className={stale ? "stale-path" : undefined}>
      <td>
        <Link to={href}>
          {path.source.name} → {path.destination.name}
        </Link>{" "}
        <FamilyTag family={path.family} />
        <div className="muted small">{path.test_types.map((type) => testKind(type).label).join(", ")}</div>
      </td>
      <td className="number">{formatMs(path.rtt_median_ms)}</td>
      <td className="number">{formatPercent(path.loss_fraction)}</td>
      <td className="number" title={path.forward_loss_fraction === null ? NO_ONE_WAY : undefined}>
        {formatPercent(path.forward_loss_fraction)}
      </td>
      <td className="number" title={path.backward_loss_fraction === null ? NO_ONE_WAY : undefined}>
        {formatPercent(path.backward_loss_fraction)}
      </td>
      <td
        className="number nowrap"
        title={path.measured_at === null ? undefined : `run of ${formatUtc(path.measured_at)}`}
      >
        {formatRate(path.rate_bps)}
        {path.ceiling_bps !== null && <div className="muted small">of {formatRate(path.ceiling_bps)}</div>}
      </td>
      <td className="nowrap">
        <CeilingBar fraction={path.fraction_of_ceiling} />
      </td>
      <td>
        {path.diagnosis === null ? (
          <span className="muted">not measured</span>
        ) : (
          <ChoiceBadge choices={labels.diagnoses} value={path.diagnosis} />
        )}
        {/* The binding ceiling term, when the diagnosis does not already name it (capacity: link). */}
        {path.limit !== null && path.limit !== "unknown" && path.limit !== path.diagnosis && (
          <div className="muted small">ceiling: {termTitle(path.limit)}</div>
        )}
      </td>
      <td className="number">
        {path.open_findings > 0 ? (
          <Link
            to={href}
            className="flag"
            title="Open the path page: its findings are listed under the chart"
            aria-label={`${String(path.open_findings)} open ${path.open_findings === 1 ? "finding" : "findings"}`}
          >
            {path.open_findings}
          </Link>
        ) : (
          <span className="muted">0</span>
        )}
      </td>
      <td className={`nowrap${stale ? " stale-age" : ""}`} title={formatUtc(path.last_run_at)}>
        {formatAgo(path.last_run_at, generatedAt)}
        {stale && <div className="small">stale</div>}
      </td>
      <td>
        {path.last_run_status === null ? (
          <span className="muted">–</span>
        ) : (
          <ChoiceBadge choices={labels.statuses} value={path.last_run_status} />
        )}
        {path.last_run_test_type !== null && (
          <div className="muted small">{testKind(path.last_run_test_type).label}</div>
        )}
      </td>
      <td>
        <SparkCell spark={spark} sparks={sparks} />
      </td>
    </tr>
  );
}

/** One page of paths; asks for the sparklines of exactly these rows. */
export function PathTable({
  rows,
  view,
  labels,
  generatedAt,
  dimmed,
  onSort,
}: {
  rows: readonly PathListEntry[];
  view: PathListView;
  labels: PathLabels;
  generatedAt: Date;
  dimmed: boolean;
  onSort: (key: SortKey) => void;
}) {
  const sparks = usePathSparks(rows.map(pairParam));
  return (
    <div className="path-list-scroll">
      <table className={`path-list${dimmed ? " stale" : ""}`}>
        <thead>
          <tr>
            {COLUMNS.map((column) => (
              <SortHeader key={column.key} column={column} view={view} onSort={onSort} />
            ))}
            <th scope="col" title="of the newest run of any test">
              Last run
            </th>
            <th scope="col" title="RTT median hourly over 24 h; throughput of recent runs under their ceiling (dashed)">
              Trend
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((path) => (
            <PathRow
              key={pairParam(path)}
              path={path}
              spark={sparks.byPair.get(pairParam(path))}
              sparks={sparks}
              labels={labels}
              generatedAt={generatedAt}
            />
          ))}
        </tbody>
      </table>
    </div>
  );
}
