// What the analysis panels make of the API's analysis payloads (typed from the contract in
// api/queries.ts): the ceiling terms in display order with their titles, and the formatting
// and form inputs the panels share.

import type { Choices, RunAnalysis, TermName } from "../api/queries";
import { formatRate } from "./format";
import { choiceFor } from "./schedule";

/** The four ceiling terms in the order tables list them. */
export const TERM_NAMES = ["link", "receive_window", "send_buffer", "loss"] as const satisfies readonly TermName[];

/** What each ceiling term is called in tables and hovers. */
export const TERM_TITLES: Record<TermName, string> = {
  link: "Link",
  receive_window: "Receive window",
  send_buffer: "Send buffer",
  loss: "Loss",
};

/**
 * A run's `limit` (a plain string in the API) by its term's title; "unknown" for none, or
 * the value itself when this UI does not know it.
 */
export function termTitle(limit: string): string {
  const known = TERM_NAMES.find((name) => name === limit);
  return known === undefined ? limit : TERM_TITLES[known];
}

/** A finding's metric by the server's label (GET /choices/), or the value itself until the
 * choices have loaded. */
export function metricTitle(metric: string, choices: Choices | undefined): string {
  return choiceFor(choices?.finding_metric, metric)?.label ?? metric;
}

/** An RTT as people say it: "31 ms", "23.4 ms". */
function shortMs(rttMs: number): string {
  return `${Number(rttMs.toFixed(1))} ms`;
}

function evidenceNumber(evidence: Record<string, unknown>, key: string): number | null {
  const value = evidence[key];
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/**
 * What an ECMP or policer-rate finding says in words, from its evidence, e.g. "Member 2 moved
 * from 31 ms to 33 ms"; null for other findings or evidence that lacks what the sentence needs.
 */
export function findingSentence(rule: string, evidence: Record<string, unknown>, current: number): string | null {
  const member = evidenceNumber(evidence, "member");
  const rtt = evidenceNumber(evidence, "member_rtt_ms");
  switch (rule) {
    case "ecmp_member_moved":
      return member !== null && rtt !== null ? `Member ${member} moved from ${shortMs(rtt)} to ${shortMs(current)}` : null;
    case "ecmp_member_appeared": {
      const added = evidenceNumber(evidence, "new_member_rtt_ms");
      return added !== null ? `A new member at ${shortMs(added)}` : null;
    }
    case "ecmp_member_vanished": {
      const sweeps = evidenceNumber(evidence, "absent_sweeps");
      return member !== null && rtt !== null && sweeps !== null
        ? `Member ${member} (${shortMs(rtt)}) missing from ${sweeps} sweeps in a row, beyond chance`
        : null;
    }
    case "ecmp_weights_shifted": {
      const before = evidenceNumber(evidence, "share_before");
      const now = evidenceNumber(evidence, "share_now");
      return member !== null && rtt !== null && before !== null && now !== null
        ? `Member ${member} (${shortMs(rtt)}) carries ${Math.round(now * 100)}% of the flows, was ${Math.round(before * 100)}%`
        : null;
    }
    case "policer_ramp": {
      const baseline = evidenceNumber(evidence, "baseline_ramp_rate_bps");
      const tcp = evidenceNumber(evidence, "tcp_rate_bps");
      return baseline !== null && tcp !== null && baseline > 0
        ? `A paced UDP ramp measured the policer at ${formatRate(current)}, ` +
            `${Math.round((1 - current / baseline) * 100)}% below the ${formatRate(baseline)} of the path's ` +
            `earlier ramps, beside a TCP run at ${formatRate(tcp)}`
        : null;
    }
    default:
      return null;
  }
}

/**
 * Where a run on an ECMP path went and how well it did there, e.g. "on ECMP member 2 (31 ms):
 * 94% of that member's ceiling"; null on a single path or when a queue hid the member. The
 * run's ceiling is its member's, so a run on a slower member is judged against that.
 */
export function memberSentence(run: RunAnalysis): string | null {
  const member = run.ceilings.member;
  if (member === null) {
    return null;
  }
  const where = `on ECMP member ${member.index} (${shortMs(member.rtt_ms)})`;
  const share = run.fraction_of_ceiling;
  return share === null ? where : `${where}: ${Math.round(share * 100)}% of that member's ceiling`;
}

/**
 * Why a run on a slower member is not a drop, e.g. "Member 2's ceiling is 66% of the fastest
 * member's: the regression rules judge the run against its own member, not as a drop."; null
 * on the fastest member or where the members' ceilings are the same.
 */
export function memberScaleNote(run: RunAnalysis): string | null {
  const member = run.ceilings.member;
  if (member === null || member.scale >= 0.995) {
    return null;
  }
  return (
    `Member ${member.index}'s ceiling is ${Math.round(member.scale * 100)}% of the fastest member's: the regression ` +
    "rules judge the run against its own member, not as a drop."
  );
}

/** A window fraction such as 0.5; "unknown" when the server could not tell. */
export function formatFraction(fraction: number | null): string {
  return fraction === null ? "unknown" : String(Math.round(fraction * 1000) / 1000);
}

function signed(value: number, text: string): string {
  return value > 0 ? `+${text}` : text;
}

/**
 * A finding's size in its unit: `relative` is current / baseline - 1 (throughput), `pp`
 * percentage points of loss, `ms` of RTT, `paths` new route sets, `members` ECMP members
 * that appeared (+) or vanished (-).
 */
export function formatMagnitude(magnitude: number, unit: string): string {
  if (!Number.isFinite(magnitude)) {
    return "–";
  }
  switch (unit) {
    case "relative":
      return signed(magnitude, `${(magnitude * 100).toFixed(0)} %`);
    case "ms":
      return signed(magnitude, `${magnitude.toFixed(2)} ms`);
    case "pp":
      return signed(magnitude, `${magnitude.toFixed(2)} pp`);
    case "members": {
      const count = Math.round(magnitude);
      return signed(count, `${count} ${Math.abs(count) === 1 ? "member" : "members"}`);
    }
    case "paths": {
      const count = Math.round(magnitude);
      return `${count} new ${count === 1 ? "path" : "paths"}`;
    }
    default:
      return unit === "" ? String(magnitude) : `${magnitude} ${unit}`;
  }
}

export const BYTES_PER_TIB = 2 ** 40;
/** The goal rates the server accepts (goal_bps 1e5..1e13). */
const GOAL_MIN_BPS = 1e5;
const GOAL_MAX_BPS = 1e13;

export type ParsedInput = { ok: true; value: number | null } | { ok: false; error: string };

/** A goal typed in Gbit/s: blank means the server's default (the slower host's link speed). */
export function parseGoalGbps(text: string): ParsedInput {
  const trimmed = text.trim();
  if (trimmed === "") {
    return { ok: true, value: null };
  }
  const gbps = Number(trimmed);
  const bps = gbps * 1e9;
  if (!Number.isFinite(gbps) || bps < GOAL_MIN_BPS || bps > GOAL_MAX_BPS) {
    return { ok: false, error: "Give a goal between 0.0001 and 10000 Gbit/s, or leave it blank for the link speed." };
  }
  return { ok: true, value: bps };
}

/** A daily volume typed in TiB: blank means the server's default. */
export function parseVolumeTib(text: string): ParsedInput {
  const trimmed = text.trim();
  if (trimmed === "") {
    return { ok: true, value: null };
  }
  const tib = Number(trimmed);
  const bytes = Math.round(tib * BYTES_PER_TIB);
  if (!Number.isFinite(tib) || bytes < 1 || bytes > 1e18) {
    return { ok: false, error: "Give a positive volume in TiB, or leave it blank for the default." };
  }
  return { ok: true, value: bytes };
}
