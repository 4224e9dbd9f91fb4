// "Throughput against its ceilings": the last runs, coloured by diagnosis, under each run's
// ceiling and today's ceiling per RTT mode. The traces are built in lib/ceilingTraces.ts.
import { useMemo } from "react";

import type { Choice, PathAnalysis } from "../../api/queries";
import { Panel } from "../../components/Panel";
import { PlotlyChart } from "../../components/PlotlyChart";
import { ceilingLayout, ceilingTraces } from "../../lib/ceilingTraces";
import { AnalysisState, NO_RUN_HINT, type AnalysisQuery } from "./AnalysisState";

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

export function CeilingsPanel({
  analysis,
  diagnoses,
}: {
  analysis: AnalysisQuery;
  diagnoses: readonly Choice[] | undefined;
}) {
  return (
    <Panel title="Throughput against its ceilings">
      <AnalysisState analysis={analysis} what="the throughput runs">
        {(data) => <CeilingChart data={data} diagnoses={diagnoses} />}
      </AnalysisState>
    </Panel>
  );
}
