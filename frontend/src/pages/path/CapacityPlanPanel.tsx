// "Capacity plan": whether a daily volume fits through this path at its measured rate, and
// how many hours and streams it takes (never more streams than what they all share, a full
// bottleneck, a policer or the link, allows); the volume re-asks the server.
import type { PathAnalysis } from "../../api/queries";
import { Panel } from "../../components/Panel";
import { BYTES_PER_TIB, parseVolumeTib } from "../../lib/analysis";
import { formatBytes, formatRate } from "../../lib/format";
import { AnalysisState, NO_RUN_HINT, type AnalysisQuery } from "./AnalysisState";
import { SettingForm } from "./SettingForm";

/** A volume in TiB for an input's placeholder. */
function tibText(bytes: number | null): string {
  return bytes === null ? "" : String(Math.round((bytes / BYTES_PER_TIB) * 100) / 100);
}

/** "10.2 h"; past two days' worth, with the days ("127,055 h (5,294 days)"), flagged. */
function HoursADay({ hours }: { hours: number | null }) {
  if (hours === null) {
    return <>–</>;
  }
  if (hours <= 48) {
    return <>{`${hours.toFixed(1)} h`}</>;
  }
  const whole = (value: number) => value.toLocaleString("en-US", { maximumFractionDigits: 0 });
  return <strong className="flag">{`${whole(hours)} h (${whole(hours / 24)} days)`}</strong>;
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
          <dd>
            <HoursADay hours={plan.hours_per_day} />
          </dd>
        </div>
        <div>
          <dt>Streams needed</dt>
          <dd>{plan.streams_needed ?? "–"}</dd>
        </div>
        {plan.shared_ceiling_bps !== null && (
          <div>
            <dt>Shared by all streams</dt>
            <dd>{formatRate(plan.shared_ceiling_bps)}</dd>
          </div>
        )}
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

export function CapacityPlanPanel({
  analysis,
  onDailyVolume,
}: {
  analysis: AnalysisQuery;
  onDailyVolume: (dailyVolumeBytes: number | null) => void;
}) {
  return (
    <Panel title="Capacity plan">
      <SettingForm
        label="Daily volume"
        unit="TiB"
        placeholder={tibText(analysis.data?.capacity_plan.daily_volume_bytes ?? null)}
        parse={parseVolumeTib}
        onApply={onDailyVolume}
      />
      <AnalysisState analysis={analysis} what="the capacity plan">
        {(data) => <CapacityFigures data={data} />}
      </AnalysisState>
    </Panel>
  );
}
