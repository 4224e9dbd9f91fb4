// The evidence of the finding clicked on the history chart (its id in the URL, so a link shows
// it too): what moved and by how much, the rules that fired, the numbers they rest on and what
// else changed at that moment.
import { Link } from "react-router-dom";

import { useChoices } from "../../api/queries";
import type { TimelineFinding } from "../../api/timelineQueries";
import { findingSentence, formatMagnitude, metricTitle } from "../../lib/analysis";
import { formatChangeValue } from "../../lib/changes";
import { formatMs, formatRate, formatUtc } from "../../lib/format";
import { FindingChanges } from "./FindingChanges";

/** An evidence value in its unit when its name says it (…_bps, …_ms), else as a diff shows it. */
export function evidenceValue(key: string, value: unknown): string {
  if (typeof value === "number" && key.endsWith("_bps")) {
    return formatRate(value);
  }
  if (typeof value === "number" && key.endsWith("_ms")) {
    return formatMs(value);
  }
  return formatChangeValue(value, 120);
}

export function FindingEvidence({
  finding,
  pathName,
  onZoom,
  onClose,
}: {
  finding: TimelineFinding;
  /** The path the finding is on, as "a → b" (the chart shows both directions). */
  pathName: string;
  onZoom: () => void;
  onClose: () => void;
}) {
  const choices = useChoices().data;
  const sentence = findingSentence(finding.rules[0] ?? "", finding.evidence, finding.current);
  const evidence = Object.entries(finding.evidence);
  return (
    <section className="panel" aria-label="Finding evidence" data-testid="finding-evidence">
      <h2>
        {metricTitle(finding.metric, choices)} {finding.direction} {formatMagnitude(finding.magnitude, finding.unit)}{" "}
        <span className="muted">
          ({finding.kind}, {finding.state}) on {pathName}
        </span>
      </h2>
      {sentence !== null && <p>{sentence}</p>}
      {finding.annotation !== "" && (
        <p className="muted">Annotation, not an alarm: {finding.annotation}</p>
      )}
      <dl className="figures">
        <div>
          <dt>From → to</dt>
          <dd>
            {finding.metric === "throughput"
              ? `${formatRate(finding.baseline)} → ${formatRate(finding.current)}`
              : `${formatChangeValue(finding.baseline)} → ${formatChangeValue(finding.current)} ${finding.unit}`}
          </dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>{formatUtc(finding.started_at)}</dd>
        </div>
        <div>
          <dt>Detected</dt>
          <dd>{formatUtc(finding.detected_at)}</dd>
        </div>
        <div>
          <dt>Cleared</dt>
          <dd>{finding.cleared_at === null ? "still open" : formatUtc(finding.cleared_at)}</dd>
        </div>
        <div>
          <dt>Rules</dt>
          <dd>{finding.rules.join(", ") || "–"}</dd>
        </div>
      </dl>
      {evidence.length > 0 && (
        <table>
          <caption>The numbers the first rule rests on</caption>
          <tbody>
            {evidence.map(([key, value]) => (
              <tr key={key}>
                <th scope="row">{key}</th>
                <td>{evidenceValue(key, value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <FindingChanges findingId={finding.id} choices={choices} />
      <p>
        <button type="button" onClick={onZoom}>
          Zoom to this finding
        </button>{" "}
        <Link to={`/findings?metric=${encodeURIComponent(finding.metric)}`}>All {metricTitle(finding.metric, choices)} findings</Link>{" "}
        <button type="button" onClick={onClose}>
          Close
        </button>
      </p>
    </section>
  );
}
