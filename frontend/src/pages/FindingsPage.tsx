import { Link, useSearchParams } from "react-router-dom";

import { useFindingList, FINDINGS_LIMIT } from "../api/findingQueries";
import { useChoices, useMeshes, type Choices, type Finding } from "../api/queries";
import { LoadError, Loading } from "../components/QueryState";
import { ChoiceBadge } from "../components/StatusBadge";
import { findingSentence, formatMagnitude, metricTitle } from "../lib/analysis";
import { formatAgo, formatUtc } from "../lib/format";
import { FINDING_WINDOWS, findingDuration, findingHref, findingWindow } from "../lib/findingsList";
import { FamilyTag } from "../components/FamilyTag";
import { FAMILIES, familyLabel } from "../lib/family";

const KINDS = [
  { value: "alarm", label: "Alarms" },
  { value: "annotation", label: "Annotations" },
] as const;

interface FindingRowProps {
  finding: Finding;
  choices: Choices | undefined;
  now: Date;
}

function FindingRow({ finding, choices, now }: FindingRowProps) {
  const sentence = findingSentence(finding.rules[0] ?? "", finding.evidence, finding.current);
  return (
    <tr className={finding.state === "open" && finding.kind === "alarm" ? "finding-open" : undefined}>
      <td className="nowrap" title={formatUtc(finding.detected_at)}>
        {formatUtc(finding.detected_at)}
        <div className="muted">{formatAgo(finding.detected_at, now)}</div>
      </td>
      <td>
        <Link to={findingHref(finding, now)} title="Open the path page at this finding">
          {finding.source.name} → {finding.destination.name}
        </Link>{" "}
        <FamilyTag family={finding.family} />
      </td>
      <td>
        {metricTitle(finding.metric, choices)}
        {finding.rules.length > 0 && <div className="muted">{finding.rules.join(", ")}</div>}
        {sentence !== null && <div>{sentence}</div>}
      </td>
      <td className="number" title={`${finding.direction} from ${String(finding.baseline)} to ${String(finding.current)}`}>
        {formatMagnitude(finding.magnitude, finding.unit)}
      </td>
      <td>
        <ChoiceBadge choices={choices?.finding_state} value={finding.state} />
      </td>
      <td className="nowrap">{findingDuration(finding, now)}</td>
      <td>
        {finding.kind === "annotation" ? (
          <>
            annotation<div className="muted">{finding.annotation}</div>
          </>
        ) : (
          "alarm"
        )}
      </td>
    </tr>
  );
}

function Filter({
  label,
  value,
  options,
  onChange,
}: {
  label: string;
  value: string | null;
  options: readonly { value: string; label: string }[];
  onChange: (value: string | null) => void;
}) {
  return (
    <label>
      {label}{" "}
      <select
        value={value ?? ""}
        onChange={(event) => {
          onChange(event.target.value === "" ? null : event.target.value);
        }}
      >
        <option value="">all</option>
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </label>
  );
}

/** Findings across every path, newest first, filtered by window, mesh, family, metric, state and kind. */
export function FindingsPage({ now = new Date() }: { now?: Date }) {
  const [params, setParams] = useSearchParams();
  const span = findingWindow(params.get("window"));
  const chosen = {
    metric: params.get("metric"),
    state: params.get("state"),
    kind: params.get("kind"),
    mesh: params.get("mesh"),
    family: params.get("family"),
  };
  const findings = useFindingList({ ...chosen, windowS: span.seconds });
  const choices = useChoices();
  const meshes = useMeshes();
  const states = choices.data?.finding_state;

  const set = (key: string, value: string | null) => {
    const next = new URLSearchParams(params);
    if (value === null) {
      next.delete(key);
    } else {
      next.set(key, value);
    }
    setParams(next);
  };
  const filtered = Object.values(chosen).some((value) => value !== null);

  let body;
  if (findings.isPending) {
    body = <Loading what="findings" />;
  } else if (findings.isError) {
    body = <LoadError what="findings" error={findings.error} />;
  } else if (findings.data.length === 0) {
    body = (
      <p className="muted" data-testid="findings-empty">
        {filtered
          ? `No findings match these filters in ${span.seconds === null ? "all time" : `the last ${span.label}`}.`
          : `No findings in ${span.seconds === null ? "all time" : `the last ${span.label}`}.`}{" "}
        Fathom opens a finding when a path&apos;s throughput, RTT, loss, route or ECMP members move away from its own
        baseline, and clears it when they come back.
      </p>
    );
  } else {
    const open = findings.data.filter((row) => row.state === "open" && row.kind === "alarm").length;
    body = (
      <>
        <p className="muted">
          {findings.data.length} {findings.data.length === 1 ? "finding" : "findings"}, {open} open{" "}
          {open === 1 ? "alarm" : "alarms"}; newest detection first, times in UTC. A path opens its page at the finding.
        </p>
        {findings.data.length >= FINDINGS_LIMIT && (
          <p className="warning" role="note">
            Only the newest {FINDINGS_LIMIT} are listed: narrow the window or filter.
          </p>
        )}
        <table className={findings.isPlaceholderData ? "findings stale" : "findings"} aria-busy={findings.isPlaceholderData}>
          <thead>
            <tr>
              <th>Detected</th>
              <th>Path</th>
              <th>Metric</th>
              <th className="number">Change</th>
              <th>State</th>
              <th>Lasted</th>
              <th>Kind</th>
            </tr>
          </thead>
          <tbody>
            {findings.data.map((finding) => (
              <FindingRow key={finding.id} finding={finding} choices={choices.data} now={now} />
            ))}
          </tbody>
        </table>
      </>
    );
  }

  const meshNames = (meshes.data ?? []).map((mesh) => mesh.name).sort((a, b) => a.localeCompare(b));
  if (chosen.mesh !== null && !meshNames.includes(chosen.mesh)) {
    meshNames.push(chosen.mesh);
  }
  return (
    <section>
      <h1>Findings</h1>
      <div className="toolbar" role="group" aria-label="Window">
        {FINDING_WINDOWS.map((option) => (
          <button
            key={option.key}
            type="button"
            aria-pressed={option.key === span.key}
            onClick={() => {
              set("window", option.key);
            }}
          >
            {option.label}
          </button>
        ))}
      </div>
      <div className="filters">
        <Filter
          label="Mesh"
          value={chosen.mesh}
          options={meshNames.map((name) => ({ value: name, label: name }))}
          onChange={(value) => {
            set("mesh", value);
          }}
        />
        <Filter
          label="Family"
          value={chosen.family}
          options={FAMILIES.map((family) => ({ value: String(family), label: familyLabel(family) }))}
          onChange={(value) => {
            set("family", value);
          }}
        />
        <Filter
          label="Metric"
          value={chosen.metric}
          options={(choices.data?.finding_metric ?? []).map(({ value, label }) => ({ value, label }))}
          onChange={(value) => {
            set("metric", value);
          }}
        />
        <Filter
          label="State"
          value={chosen.state}
          options={(states ?? []).map((choice) => ({ value: choice.value, label: choice.label }))}
          onChange={(value) => {
            set("state", value);
          }}
        />
        <Filter
          label="Kind"
          value={chosen.kind}
          options={KINDS}
          onChange={(value) => {
            set("kind", value);
          }}
        />
      </div>
      {body}
    </section>
  );
}
