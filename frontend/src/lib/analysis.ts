// The analysis API's free-form JSON (ceilings, run evidence, RTT levels over time) narrowed
// to what the UI shows. Every reader accepts anything: a missing or mistyped key becomes
// null or "unknown", never an exception, so an older or newer backend cannot break a page.

import { asNumber, asRecord } from "./json";

export const TERM_NAMES = ["link", "receive_window", "send_buffer", "loss"] as const;
export type TermName = (typeof TERM_NAMES)[number];
export type Limit = TermName | "unknown";

/** What each ceiling term is called in tables and hovers. */
export const TERM_TITLES: Record<TermName, string> = {
  link: "Link",
  receive_window: "Receive window",
  send_buffer: "Send buffer",
  loss: "Loss",
};

/** A term's title, "unknown" for none, or the value itself when this UI does not know it. */
export function termTitle(limit: string): string {
  const known = TERM_NAMES.find((name) => name === limit);
  return known === undefined ? limit : TERM_TITLES[known];
}

export interface CeilingTerm {
  /** null when the term is unknown; `reason` then says why. */
  rateBps: number | null;
  reason: string;
}

/** The four terms at one RTT. */
export interface CeilingSet {
  rttMs: number | null;
  rttSource: string;
  limit: Limit;
  ceilingBps: number | null;
  terms: Record<TermName, CeilingTerm>;
}

/** Buffer sizes and window fractions behind the window terms, and where each came from. */
export interface Buffers {
  receiveBytes: number | null;
  receiveSource: string;
  receiveFraction: number | null;
  receiveFractionSource: string;
  sendBytes: number | null;
  sendSource: string;
  sendFraction: number | null;
  sendFractionSource: string;
}

export interface RunCeilings {
  buffers: Buffers;
  atMinRtt: CeilingSet;
  underLoad: CeilingSet | null;
  perMode: CeilingSet[];
}

/** What a run's diagnosis rests on. */
export interface RunEvidence {
  label: string | null;
  rateBps: number | null;
  ceilingBps: number | null;
  winningTerm: Limit;
  fractionOfCeiling: number | null;
  sentences: string[];
  notConverged: boolean;
}

export type TimeModesKind = "none" | "route_change" | "congestion";

/** Base-RTT levels that follow each other in time rather than by flow. */
export interface TimeModes {
  kind: TimeModesKind;
  levelsMs: number[];
  changeTimes: string[];
  reason: string;
}

function asText(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function asStrings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
}

function asLimit(value: unknown): Limit {
  return typeof value === "string" && (TERM_NAMES as readonly string[]).includes(value)
    ? (value as TermName)
    : "unknown";
}

function parseTerm(value: unknown): CeilingTerm {
  const record = asRecord(value);
  if (record === null) {
    return { rateBps: null, reason: "not reported" };
  }
  return { rateBps: asNumber(record.rate_bps), reason: asText(record.reason) };
}

/** A ceiling set, or null when the value is not an object at all. */
export function parseCeilingSet(value: unknown): CeilingSet | null {
  const record = asRecord(value);
  if (record === null) {
    return null;
  }
  const termsRecord = asRecord(record.terms) ?? {};
  const terms: Record<TermName, CeilingTerm> = {
    link: parseTerm(termsRecord.link),
    receive_window: parseTerm(termsRecord.receive_window),
    send_buffer: parseTerm(termsRecord.send_buffer),
    loss: parseTerm(termsRecord.loss),
  };
  return {
    rttMs: asNumber(record.rtt_ms),
    rttSource: asText(record.rtt_source),
    limit: asLimit(record.limit),
    ceilingBps: asNumber(record.ceiling_bps),
    terms,
  };
}

function parseBuffers(value: unknown): Buffers {
  const record = asRecord(value) ?? {};
  return {
    receiveBytes: asNumber(record.receive_bytes),
    receiveSource: asText(record.receive_source),
    receiveFraction: asNumber(record.receive_fraction),
    receiveFractionSource: asText(record.receive_fraction_source),
    sendBytes: asNumber(record.send_bytes),
    sendSource: asText(record.send_source),
    sendFraction: asNumber(record.send_fraction),
    sendFractionSource: asText(record.send_fraction_source),
  };
}

/** `ceilings_now` or a run's `ceilings`; null when there is no usable at_min_rtt set. */
export function parseRunCeilings(value: unknown): RunCeilings | null {
  const record = asRecord(value);
  const atMinRtt = record === null ? null : parseCeilingSet(record.at_min_rtt);
  if (record === null || atMinRtt === null) {
    return null;
  }
  const perMode = Array.isArray(record.per_mode)
    ? record.per_mode.map(parseCeilingSet).filter((set): set is CeilingSet => set !== null)
    : [];
  return {
    buffers: parseBuffers(record.buffers),
    atMinRtt,
    underLoad: parseCeilingSet(record.under_load),
    perMode,
  };
}

export function parseRunEvidence(value: unknown): RunEvidence {
  const record = asRecord(value) ?? {};
  const label = asText(record.label);
  return {
    label: label === "" ? null : label,
    rateBps: asNumber(record.rate_bps),
    ceilingBps: asNumber(record.ceiling_bps),
    winningTerm: asLimit(record.winning_term),
    fractionOfCeiling: asNumber(record.fraction_of_ceiling),
    sentences: asStrings(record.evidence),
    notConverged: record.not_converged === true,
  };
}

export function parseTimeModes(value: unknown): TimeModes {
  const record = asRecord(value) ?? {};
  const kind = record.kind === "route_change" || record.kind === "congestion" ? record.kind : "none";
  const levelsMs = Array.isArray(record.levels_ms)
    ? record.levels_ms.map(asNumber).filter((level): level is number => level !== null)
    : [];
  return { kind, levelsMs, changeTimes: asStrings(record.change_times), reason: asText(record.reason) };
}

/** Line rates in decimal units as iperf3 reports them: 3.2 Gbit/s, 940 Mbit/s. */
export function formatRate(bps: number | null | undefined): string {
  if (bps === null || bps === undefined || !Number.isFinite(bps) || bps < 0) {
    return "–";
  }
  const units: [number, string][] = [
    [1e12, "Tbit/s"],
    [1e9, "Gbit/s"],
    [1e6, "Mbit/s"],
    [1e3, "kbit/s"],
  ];
  for (const [scale, unit] of units) {
    if (bps >= scale) {
      const value = bps / scale;
      return `${value >= 100 ? value.toFixed(0) : value.toFixed(1)} ${unit}`;
    }
  }
  return `${bps.toFixed(0)} bit/s`;
}

/** One term for a table cell: its rate, or why it is unknown. */
export function formatTerm(term: CeilingTerm): string {
  if (term.rateBps !== null) {
    return formatRate(term.rateBps);
  }
  return term.reason === "" ? "unknown" : `unknown — ${term.reason}`;
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
 * percentage points of loss, `ms` of RTT, `paths` new route sets.
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
