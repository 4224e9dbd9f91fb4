// Recent and upcoming exclusive slots: the list with its filters, and each agent's timeline.
import { Fragment, useMemo } from "react";
import { useSearchParams } from "react-router-dom";

import { useAgents, useChoices, useSlots, type Choice, type Slot } from "../../api/queries";
import { PlotlyChart } from "../../components/PlotlyChart";
import { LoadError, Loading } from "../../components/QueryState";
import { ChoiceBadge } from "../../components/StatusBadge";
import { formatUtc } from "../../lib/format";
import {
  choiceFor,
  countProblems,
  firstUpcoming,
  formatApproxSpan,
  formatRelative,
  formatSpan,
  isProblem,
  slotLengthS,
} from "../../lib/schedule";
import { slotTimeline } from "../../lib/slotTimeline";
import { testKind } from "../../lib/testKinds";
import { FamilyTag } from "../../components/FamilyTag";

/** How far back the slot list starts: a day covers every interval of the default mesh. */
export const SLOT_LOOKBACK_S = 24 * 3600;
/** The most slots the list asks for; the API orders by start, so a full list is cut at its end. */
export const SLOT_LIMIT = 200;
const LOOKBACK = formatApproxSpan(SLOT_LOOKBACK_S);
/** The timeline's reach back, chosen on the page (the URL's `window`, in seconds). */
export const TIMELINE_WINDOWS: readonly { seconds: number; label: string }[] = [
  { seconds: 3600, label: "1 h" },
  { seconds: 6 * 3600, label: "6 h" },
  { seconds: 24 * 3600, label: "24 h" },
];
export const DEFAULT_TIMELINE_WINDOW_S = 6 * 3600;
/** The API's most slots per request: the timeline says so when a window holds more. */
export const TIMELINE_LIMIT = 5000;

function timelineWindowS(raw: string | null): number {
  const value = Number(raw);
  return TIMELINE_WINDOWS.some((option) => option.seconds === value) ? value : DEFAULT_TIMELINE_WINDOW_S;
}

function SlotRow({ slot, states, now }: { slot: Slot; states: readonly Choice[] | undefined; now: Date }) {
  const problem = isProblem(slot);
  const reason = slot.reason ?? "";
  return (
    <tr className={problem ? "slot-problem" : undefined}>
      <td className="nowrap">
        {formatUtc(slot.start_at)}
        <div className="muted">{formatRelative(slot.start_at, now)}</div>
      </td>
      <td>
        {slot.source_agent} → {slot.destination_agent} <FamilyTag family={slot.family ?? 4} />
      </td>
      <td>
        {testKind(slot.test_type).label}
        <div className="muted">
          {slot.mesh !== null && `${slot.mesh}/${slot.test ?? "?"}, `}holds {formatSpan(Math.round(slotLengthS(slot)))}
        </div>
      </td>
      <td>
        <ChoiceBadge choices={states} value={slot.state} />
      </td>
      <td>
        {problem ? (
          <strong className="reason">{reason === "" ? "no reason recorded" : reason}</strong>
        ) : (
          <span className="muted">{reason === "" ? "–" : reason}</span>
        )}
      </td>
    </tr>
  );
}

function SlotFilters({
  states,
  state,
  agent,
  onChange,
}: {
  states: readonly Choice[] | undefined;
  state: string | null;
  agent: string | null;
  onChange: (state: string | null, agent: string | null) => void;
}) {
  const agents = useAgents();
  const names = (agents.data ?? []).map((item) => item.name);
  if (agent !== null && !names.includes(agent)) {
    names.push(agent);
  }
  names.sort((a, b) => a.localeCompare(b));
  return (
    <div className="filters">
      <div className="toolbar" role="group" aria-label="Slot state">
        <button
          type="button"
          aria-pressed={state === null}
          onClick={() => {
            onChange(null, agent);
          }}
        >
          All
        </button>
        {(states ?? []).map((choice) => (
          <button
            key={choice.value}
            type="button"
            aria-pressed={state === choice.value}
            onClick={() => {
              onChange(choice.value, agent);
            }}
          >
            {choice.label}
          </button>
        ))}
      </div>
      <label>
        Agent{" "}
        <select
          value={agent ?? ""}
          onChange={(event) => {
            onChange(state, event.target.value === "" ? null : event.target.value);
          }}
        >
          <option value="">all agents</option>
          {names.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </label>
    </div>
  );
}

function emptySlotsHint(stateLabel: string | null, agent: string | null): string {
  if (stateLabel === null && agent === null) {
    return (
      `No slots in the last ${LOOKBACK} or planned ahead. Throughput tests get slots once an enabled mesh ` +
      "with a throughput test has two active agents; the planner runs every 5 minutes."
    );
  }
  const which = stateLabel === null ? "" : `${stateLabel.toLowerCase()} `;
  const whose = agent === null ? "" : ` for ${agent}`;
  return `No ${which}slots${whose} in the last ${LOOKBACK} or planned ahead. Choose “All” or another agent to see the rest.`;
}

/** Recent and upcoming slots, filtered by state and agent; failures show why. */
export function SlotsPanel({ now = new Date() }: { now?: Date }) {
  const [params, setParams] = useSearchParams();
  const state = params.get("state");
  const agent = params.get("agent");
  const choices = useChoices();
  const states = choices.data?.slot_state;
  const slots = useSlots({ state, agent, lookbackS: SLOT_LOOKBACK_S, limit: SLOT_LIMIT });

  const setFilters = (nextState: string | null, nextAgent: string | null) => {
    const next = new URLSearchParams(params);
    next.delete("state");
    next.delete("agent");
    if (nextState !== null) {
      next.set("state", nextState);
    }
    if (nextAgent !== null) {
      next.set("agent", nextAgent);
    }
    setParams(next);
  };
  const windowS = timelineWindowS(params.get("window"));
  const setWindow = (seconds: number) => {
    const next = new URLSearchParams(params);
    next.set("window", String(seconds));
    setParams(next);
  };

  let body;
  if (slots.isPending) {
    body = <Loading what="slots" />;
  } else if (slots.isError) {
    body = <LoadError what="slots" error={slots.error} />;
  } else if (slots.data.length === 0) {
    body = (
      <p className="muted">
        {emptySlotsHint(state === null ? null : (choiceFor(states, state)?.label ?? state), agent)}
      </p>
    );
  } else {
    const list = slots.data;
    const truncated = list.length >= SLOT_LIMIT;
    const upcoming = firstUpcoming(list, now);
    // A list cut at its end may have lost the slots after now: a "now" line there would lie.
    const showNow = !truncated || upcoming < list.length;
    const problems = countProblems(list);
    body = (
      <>
        {problems.length > 0 && (
          <p className="problems" role="status">
            In this list:{" "}
            {problems.map(([value, count], index) => (
              <Fragment key={value}>
                {index > 0 && ", "}
                {count} <ChoiceBadge choices={states} value={value} />
              </Fragment>
            ))}
            . Their reason is in the last column.
          </p>
        )}
        {truncated && (
          <p className="warning" role="note">
            Only the first {SLOT_LIMIT} slots from {formatUtc(list[0]?.start_at)} on are shown, oldest first;
            filter by state or agent to see later ones.
          </p>
        )}
        <table className={slots.isPlaceholderData ? "stale" : undefined}>
          <thead>
            <tr>
              <th>Start</th>
              <th>Source → destination</th>
              <th>Test</th>
              <th>State</th>
              <th>Reason</th>
            </tr>
          </thead>
          <tbody>
            {list.map((slot, index) => (
              <Fragment key={slot.id}>
                {showNow && index === upcoming && <NowRow now={now} />}
                <SlotRow slot={slot} states={states} now={now} />
              </Fragment>
            ))}
            {showNow && upcoming === list.length && <NowRow now={now} />}
          </tbody>
        </table>
      </>
    );
  }

  return (
    <>
      <SlotFilters states={states} state={state} agent={agent} onChange={setFilters} />
      {choices.isError && <LoadError what="slot state labels" error={choices.error} />}
      <div className="toolbar" role="group" aria-label="Timeline window">
        {TIMELINE_WINDOWS.map(({ seconds, label }) => (
          <button
            key={seconds}
            type="button"
            aria-pressed={windowS === seconds}
            onClick={() => {
              setWindow(seconds);
            }}
          >
            Last {label}
          </button>
        ))}
      </div>
      <SlotTimeline state={state} agent={agent} windowS={windowS} states={states} />
      <details className="slot-list" open={state !== null || agent !== null}>
        <summary>
          The slots as a list, from {LOOKBACK} ago on, oldest first, times in UTC
          {slots.isFetching && !slots.isPending && " (refreshing…)"}
        </summary>
        {body}
      </details>
    </>
  );
}

/** Each agent's exclusive time as a row of bars, past and planned, coloured by state. */
function SlotTimeline({
  state,
  agent,
  windowS,
  states,
}: {
  state: string | null;
  agent: string | null;
  windowS: number;
  states: readonly Choice[] | undefined;
}) {
  // As far ahead as back: the plan reaches a day out, which would squeeze an hour's bars flat.
  const slots = useSlots({ state, agent, lookbackS: windowS, aheadS: windowS, limit: TIMELINE_LIMIT });
  const figure = useMemo(
    () => (slots.data === undefined ? null : slotTimeline(slots.data, states, new Date(slots.dataUpdatedAt))),
    [slots.data, slots.dataUpdatedAt, states],
  );
  if (slots.isPending) {
    return <Loading what="the slot timeline" />;
  }
  if (slots.isError) {
    return <LoadError what="the slot timeline" error={slots.error} />;
  }
  if (figure === null || figure.agents.length === 0) {
    return (
      <p className="muted" data-testid="slot-timeline-empty">
        Nothing to draw: no slots from {formatApproxSpan(windowS)} ago to as far ahead
        {state !== null || agent !== null ? " that match the filter" : ""}.
      </p>
    );
  }
  const problems = countProblems(slots.data);
  return (
    <>
      <p className="muted">
        {slots.data.length} slots on {figure.agents.length} agents, from {formatApproxSpan(windowS)} ago to as far
        ahead; each slot is drawn on its sender&apos;s and its receiver&apos;s row. Hover a bar for its path, test
        and reason.
        {problems.length > 0 &&
          ` ${problems.map(([value, count]) => `${count} ${choiceFor(states, value)?.label.toLowerCase() ?? value}`).join(", ")}.`}
      </p>
      {slots.data.length >= TIMELINE_LIMIT && (
        <p className="warning" role="note">
          Only the first {TIMELINE_LIMIT} slots of the window are drawn; filter by agent or choose a shorter window.
        </p>
      )}
      <PlotlyChart
        data={figure.data}
        layout={figure.layout}
        height={figure.height}
        uiRevision={`${state ?? ""}|${agent ?? ""}|${String(windowS)}`}
        testId="slot-timeline"
      />
    </>
  );
}

function NowRow({ now }: { now: Date }) {
  return (
    <tr className="now">
      <td colSpan={5}>now ({formatUtc(now.toISOString())})</td>
    </tr>
  );
}

