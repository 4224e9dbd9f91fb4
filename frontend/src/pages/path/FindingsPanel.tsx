// "Findings": where throughput, RTT, loss or the route moved away from this path's
// baseline, as the regression rules found it, with their state and annotation.
import type { Choices, Finding, PathAnalysis } from "../../api/queries";
import { Panel } from "../../components/Panel";
import { ChoiceBadge } from "../../components/StatusBadge";
import { findingSentence, formatMagnitude, metricTitle } from "../../lib/analysis";
import { formatUtc } from "../../lib/format";
import { AnalysisState, type AnalysisQuery } from "./AnalysisState";

function FindingRow({ finding, choices }: { finding: Finding; choices: Choices | undefined }) {
  const sentence = findingSentence(finding.rules[0] ?? "", finding.evidence, finding.current);
  return (
    <tr>
      <td>
        {metricTitle(finding.metric, choices)}
        {finding.rules.length > 0 && <div className="muted">{finding.rules.join(", ")}</div>}
        {sentence !== null && <div>{sentence}</div>}
      </td>
      <td>{finding.direction}</td>
      <td className="number">{formatMagnitude(finding.magnitude, finding.unit)}</td>
      <td>
        <ChoiceBadge choices={choices?.finding_state} value={finding.state} />
      </td>
      <td>{finding.kind}</td>
      <td className="nowrap">{formatUtc(finding.started_at)}</td>
      <td className="nowrap">{formatUtc(finding.detected_at)}</td>
      <td className="nowrap">{finding.cleared_at === null ? "–" : formatUtc(finding.cleared_at)}</td>
      <td>{finding.annotation === "" ? <span className="muted">–</span> : finding.annotation}</td>
    </tr>
  );
}

function FindingsTable({ data, choices }: { data: PathAnalysis; choices: Choices | undefined }) {
  if (data.findings.length === 0) {
    return (
      <p className="muted">
        No findings on this path. Every minute Fathom re-runs its regression rules on paths with new data, and opens a
        finding when throughput, RTT, loss, the route or the ECMP members move away from their baseline.
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
          <FindingRow key={finding.id} finding={finding} choices={choices} />
        ))}
      </tbody>
    </table>
  );
}

export function FindingsPanel({
  analysis,
  choices,
}: {
  analysis: AnalysisQuery;
  choices: Choices | undefined;
}) {
  return (
    <Panel title="Findings">
      <AnalysisState analysis={analysis} what="the findings">
        {(data) => <FindingsTable data={data} choices={choices} />}
      </AnalysisState>
    </Panel>
  );
}
