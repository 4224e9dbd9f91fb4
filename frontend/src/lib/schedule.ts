// What the schedule page says about exclusive (throughput) time: how long things are, how
// busy each agent is, whom a mesh tests and which slots went wrong, as plain functions of
// the API's data. How each test kind's options read is lib/testKinds.ts.
import type { AgentUtilization, Choice, Mesh, MeshTest, Slot, SlotState } from "../api/queries";
import { formatAgo, formatDuration } from "./format";

const NO_VALUE = "–";

/**
 * Above this steady-state demand an agent cannot take more throughput tests: the planner
 * needs free time around each run to honour slips, and slots start to go unschedulable.
 */
export const DEMAND_LIMIT = 0.8;

/** The states in which a slot did not give a result; their reason is what the page is for. */
export const PROBLEM_STATES: readonly SlotState[] = ["missed", "failed", "unschedulable"];

/** A configured duration in the unit it was most likely written in: 21600 -> "6 h", 90 -> "90 s". */
export function formatSpan(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds < 0) {
    return NO_VALUE;
  }
  if (seconds === 0) {
    return "0 s";
  }
  if (!Number.isInteger(seconds)) {
    return seconds < 10 ? `${Number(seconds.toFixed(1))} s` : formatSpan(Math.round(seconds));
  }
  return formatDuration(seconds);
}

function roundTo(value: number, places: number): string {
  return String(Number(value.toFixed(places)));
}

/** A measured length, rounded to read at a glance: 86399.7 -> "24 h", 5400 -> "1.5 h", 1980 -> "33 min". */
export function formatApproxSpan(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds < 0) {
    return NO_VALUE;
  }
  if (seconds < 90) {
    return `${Math.round(seconds)} s`;
  }
  if (seconds < 90 * 60) {
    return `${Math.round(seconds / 60)} min`;
  }
  if (seconds < 48 * 3600) {
    const hours = seconds / 3600;
    return `${hours < 10 ? roundTo(hours, 1) : Math.round(hours)} h`;
  }
  const days = seconds / 86_400;
  return `${days < 10 ? roundTo(days, 1) : Math.round(days)} d`;
}

/**
 * A share of time as a percentage. Shares are read against the 80 % limit, so whole percents
 * suffice above 10 %; below, one decimal keeps a light agent distinguishable from an idle one.
 */
export function formatShare(fraction: number | null | undefined): string {
  if (fraction === null || fraction === undefined || !Number.isFinite(fraction) || fraction < 0) {
    return NO_VALUE;
  }
  const percent = fraction * 100;
  if (percent === 0) {
    return "0 %";
  }
  if (percent < 0.1) {
    return "< 0.1 %";
  }
  if (percent < 10) {
    return `${roundTo(percent, 1)} %`;
  }
  return `${Math.round(percent)} %`;
}

/** The width of a share bar in percent, clamped: a demand of 1.3 fills the bar, no more. */
export function shareBarPercent(fraction: number): number {
  if (!Number.isFinite(fraction) || fraction <= 0) {
    return 0;
  }
  return Math.min(100, fraction * 100);
}

export function isOverDemand(row: AgentUtilization): boolean {
  return row.demand > DEMAND_LIMIT;
}

/** Busiest first: by demand, then by reserved time, then by name, so the order is stable. */
export function sortByDemand(rows: readonly AgentUtilization[]): AgentUtilization[] {
  return [...rows].sort(
    (a, b) => b.demand - a.demand || b.utilization - a.utilization || a.agent.localeCompare(b.agent),
  );
}

function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** "planned until 14:30 UTC, 2 h ahead", with the date when the horizon ends on another day. */
export function horizonSummary(plannedUntil: string, horizonS: number, now: Date): string {
  const until = new Date(plannedUntil);
  if (Number.isNaN(until.getTime())) {
    return `planned ${formatApproxSpan(horizonS)} ahead`;
  }
  const clock = until.toISOString().slice(11, 16);
  const day = utcDay(until) === utcDay(now) ? "" : `${utcDay(until)} `;
  return `planned until ${day}${clock} UTC, ${formatApproxSpan(horizonS)} ahead`;
}

/** "every 6 h, slip 6 h"; without a slip the runs start on the interval, so it is left out. */
export function testSchedule(test: Pick<MeshTest, "interval_s" | "slip_s">): string {
  const every = `every ${formatSpan(test.interval_s)}`;
  return test.slip_s > 0 ? `${every}, slip ${formatSpan(test.slip_s)}` : every;
}

/** Who a mesh tests between: "every agent", "dca, dcb", "A: dca ↔ B: dcb", "dca → targets: x". */
export function membersSummary(mesh: Mesh): string {
  if (mesh.all_agents === true) {
    return "every agent";
  }
  const members = mesh.members ?? [];
  const names = (side: string | null) =>
    members
      .filter((member) => side === null || member.side === side)
      .map((member) => member.agent)
      .sort((a, b) => a.localeCompare(b))
      .join(", ");
  if (mesh.kind === "disjoint") {
    const arrow = mesh.unidirectional === true ? "→" : "↔";
    return `A: ${names("a") || "none"} ${arrow} B: ${names("b") || "none"}`;
  }
  const everyone = names(null) || "no members";
  if (mesh.kind === "list") {
    return `${everyone} → targets: ${(mesh.targets ?? []).join(", ") || "none"}`;
  }
  return everyone;
}

export function isProblem(slot: Pick<Slot, "state">): boolean {
  return PROBLEM_STATES.includes(slot.state);
}

/** The number of slots in each problem state, in PROBLEM_STATES order, leaving out zeros. */
export function countProblems(slots: readonly Pick<Slot, "state">[]): [SlotState, number][] {
  return PROBLEM_STATES.map((state): [SlotState, number] => [
    state,
    slots.filter((slot) => slot.state === state).length,
  ]).filter(([, count]) => count > 0);
}

/** The index of the first slot that starts after now, in a list ordered by start. */
export function firstUpcoming(slots: readonly Pick<Slot, "start_at">[], now: Date): number {
  const index = slots.findIndex((slot) => new Date(slot.start_at).getTime() > now.getTime());
  return index === -1 ? slots.length : index;
}

/** "in 5 min" for what is ahead, "12 min ago" for what is past. */
export function formatRelative(iso: string, now: Date): string {
  const ms = new Date(iso).getTime() - now.getTime();
  if (Number.isNaN(ms)) {
    return NO_VALUE;
  }
  return ms > 0 ? `in ${formatApproxSpan(ms / 1000)}` : formatAgo(iso, now);
}

/** How long a slot holds both agents, from its start and end: "45 s". */
export function slotLengthS(slot: Pick<Slot, "start_at" | "end_at">): number {
  return (new Date(slot.end_at).getTime() - new Date(slot.start_at).getTime()) / 1000;
}

/** The server's choice for a value, or null when it has none (or the choices are not loaded). */
export function choiceFor(choices: readonly Choice[] | undefined, value: string): Choice | null {
  return choices?.find((choice) => choice.value === value) ?? null;
}
