// "Findings": where throughput, RTT, loss or the route moved away from this path's
// baseline, as the regression rules found it, with their state and annotation.
import type { Choice, Finding, PathAnalysis } from "../../api/queries";
import { Panel } from "../../components/Panel";
import { ChoiceBadge } from "../../components/StatusBadge";
import { ecmpFindingSentence, formatMagnitude, metricTitle } from "../../lib/analysis";
import { formatUtc } from "../../lib/format";
import { AnalysisState, type AnalysisQuery } from "./AnalysisState";

function FindingRow({ finding, states }: { finding: Finding; states: readonly Choice[] | undefined }) {
  const sentence = ecmpFindingSentence(finding.rules[0] ?? "", finding.evidence, finding.current);
  return (
    <tr>
      <td>
        {metricTitle(finding.metric)}
        {finding.rules.length > 0 && <div className="muted">{finding.rules.join(", ")}</div>}
        {sentence !== null && <div>{sentence}</div>}
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
          <FindingRow key={finding.id} finding={finding} states={states} />
        ))}
      </tbody>
    </table>
  );
}

export function FindingsPanel({
  analysis,
  states,
}: {
  analysis: AnalysisQuery;
  states: readonly Choice[] | undefined;
}) {
  return (
    <Panel title="Findings">
      <AnalysisState analysis={analysis} what="the findings">
        {(data) => <FindingsTable data={data} states={states} />}
      </AnalysisState>
    </Panel>
  );
}
