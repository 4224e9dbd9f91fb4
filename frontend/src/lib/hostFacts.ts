// Host facts arrive as free-form JSON from the agent; this narrows them to what the UI
// shows and ignores anything else, so an older or newer agent cannot break the page.

import type { ReportedSysctl } from "../api/contract";
import { asNumber, asRecord } from "./json";

export interface HostInterface {
  name: string;
  mtu: number | null;
  speedMbps: number | null;
  addresses: string[];
}

/** The host clock as the page reads it: whether one-way delays to and from the host are trusted. */
export type HostClock =
  | { state: "synchronized"; maxErrorMs: number | null }
  | { state: "unsynchronized" }
  | { state: "shared" }
  // unreadable: the agent could not read it; unreported: an agent older than the field.
  | { state: "unknown"; reason: "unreadable" | "unreported" };

export interface HostFacts {
  hostname: string | null;
  kernel: string | null;
  os: string | null;
  cpus: number | null;
  iperf3Version: string | null;
  iperf3Port: number | null;
  interfaces: HostInterface[];
  sysctls: [string, string][];
  clock: HostClock;
}

function asString(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}

function parseInterface(value: unknown): HostInterface | null {
  const record = asRecord(value);
  const name = record === null ? null : asString(record.name);
  if (record === null || name === null) {
    return null;
  }
  const addresses = Array.isArray(record.addresses)
    ? record.addresses.filter((address): address is string => typeof address === "string")
    : [];
  return { name, mtu: asNumber(record.mtu), speedMbps: asNumber(record.speed_mbps), addresses };
}

function parseClock(value: unknown): HostClock {
  const record = asRecord(value);
  if (record === null) {
    return { state: "unknown", reason: "unreported" };
  }
  if (record.readable !== true) {
    return { state: "unknown", reason: "unreadable" };
  }
  if (record.source === "shared") {
    return { state: "shared" };
  }
  return record.synchronized === true
    ? { state: "synchronized", maxErrorMs: asNumber(record.max_error_ms) }
    : { state: "unsynchronized" };
}

/** A clock's error bound at two significant digits: ±0.4 ms, ±12 ms, ±16 s. */
export function formatClockError(maxErrorMs: number): string {
  const [value, unit] = maxErrorMs >= 1000 ? [maxErrorMs / 1000, "s"] : [maxErrorMs, "ms"];
  return `±${String(Number(value.toPrecision(2)))} ${unit}`;
}

/** The clock as the host facts say it; a warning for a clock one-way delays cannot trust. */
export function describeClock(clock: HostClock): { text: string; warning: boolean } {
  switch (clock.state) {
    case "synchronized":
      return {
        text: clock.maxErrorMs === null ? "synchronized" : `synchronized (${formatClockError(clock.maxErrorMs)})`,
        warning: false,
      };
    case "unsynchronized":
      return { text: "not synchronized: one-way delays to and from this host are not trusted", warning: true };
    case "shared":
      return { text: "shared lab clock", warning: false };
    case "unknown":
      return {
        text: clock.reason === "unreadable" ? "unknown (the agent could not read it)" : "unknown (not reported by this agent version)",
        warning: false,
      };
  }
}

export function parseHostFacts(value: unknown): HostFacts | null {
  const record = asRecord(value);
  if (record === null) {
    return null;
  }
  const interfaces = Array.isArray(record.interfaces)
    ? record.interfaces.map(parseInterface).filter((item): item is HostInterface => item !== null)
    : [];
  const sysctlRecord = asRecord(record.sysctls) ?? {};
  const sysctls = Object.entries(sysctlRecord)
    .filter((entry): entry is [string, string] => typeof entry[1] === "string")
    .sort(([a], [b]) => a.localeCompare(b));
  return {
    hostname: asString(record.hostname),
    kernel: asString(record.kernel),
    os: asString(record.os),
    cpus: asNumber(record.cpus),
    iperf3Version: asString(record.iperf3_version),
    iperf3Port: asNumber(record.iperf3_port),
    interfaces,
    sysctls,
    clock: parseClock(record.clock),
  };
}

/** The sysctls that hold buffer sizes ("min default max" triples or single byte counts); typed
 * by the contract's ReportedSysctl, so a name the agents do not report fails to compile. */
const BYTE_SYSCTLS = new Set<string>([
  "net.ipv4.tcp_rmem",
  "net.ipv4.tcp_wmem",
  "net.core.rmem_max",
  "net.core.wmem_max",
] satisfies ReportedSysctl[]);

export function isByteSysctl(name: string): boolean {
  return BYTE_SYSCTLS.has(name);
}

/** Parses "4096 131072 6291456" or "212992" into byte counts; null if not all numeric. */
export function sysctlBytes(value: string): number[] | null {
  const fields = value.trim().split(/\s+/);
  const numbers = fields.map(Number);
  return fields.length > 0 && fields[0] !== "" && numbers.every(Number.isSafeInteger) ? numbers : null;
}
