// The analysis of one path, below its RTT chart: throughput against its ceilings, what
// limits it, RTT modes, advice and a capacity plan, and findings. One query feeds every
// panel; each panel (one file each under path/) still loads, fails and explains its
// emptiness on its own.
import { useState } from "react";

import { useChoices, usePathAnalysis } from "../api/queries";
import { LoadError } from "../components/QueryState";
import { AdvicePanel } from "./path/AdvicePanel";
import { CapacityPlanPanel } from "./path/CapacityPlanPanel";
import { CeilingsPanel } from "./path/CeilingsPanel";
import { FindingsPanel } from "./path/FindingsPanel";
import { LimitPanel } from "./path/LimitPanel";
import { RttModesPanel } from "./path/RttModesPanel";

/** The analysis panels of one path; the goal rate and daily volume re-ask the server. */
export function PathAnalysisSection({
  source,
  destination,
  family = 4,
}: {
  source: string;
  destination: string;
  family?: number;
}) {
  const [goalBps, setGoalBps] = useState<number | null>(null);
  const [dailyVolumeBytes, setDailyVolumeBytes] = useState<number | null>(null);
  const analysis = usePathAnalysis(source, destination, { goalBps, dailyVolumeBytes, family });
  const choices = useChoices();
  const diagnoses = choices.data?.diagnosis;

  return (
    <section className="analysis" aria-label="Analysis">
      <h2 className="section-heading">Analysis</h2>
      {choices.isError && <LoadError what="the diagnosis labels" error={choices.error} />}
      <CeilingsPanel analysis={analysis} diagnoses={diagnoses} />
      <LimitPanel analysis={analysis} diagnoses={diagnoses} />
      <RttModesPanel analysis={analysis} verdicts={choices.data?.rtt_mode_verdict} />
      <AdvicePanel analysis={analysis} goalBps={goalBps} onGoal={setGoalBps} />
      <CapacityPlanPanel analysis={analysis} onDailyVolume={setDailyVolumeBytes} />
      <FindingsPanel analysis={analysis} choices={choices.data} />
    </section>
  );
}
