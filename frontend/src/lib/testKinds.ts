// What the UI knows of each test kind: what it is called and how its options read. Pages ask
// this registry instead of switching on a run's test type, so a new kind (perfSONAR's rtt or
// latencybg) plugs in with one entry below; a kind this UI does not know yet still shows,
// under its own name and with its options as written.
import {
  testKindValues,
  type FlowsweepOptions,
  type LatencyOptions,
  type PingOptions,
  type TestKind,
  type ThroughputOptions,
  type TraceOptions,
} from "../api/contract";
import { formatBytes, formatRate } from "./format";
import { formatSpan } from "./schedule";

export interface TestKindView {
  /** What tables call the kind. */
  label: string;
  /**
   * The options a test's spec sets, in words: ["20 s", "4 streams"]. The server stores the
   * spec as written, so options left out run with their defaults and are not listed; an
   * option this UI does not know is shown as written rather than hidden.
   */
  summarizeSpec(spec: unknown): string[];
}

type OptionValue = string | number | boolean | null;
/** How one option reads; null for a value that means "the default" (0, false, empty), not worth a word. */
type OptionFormatter = (value: OptionValue) => string | null;

/**
 * A formatter for every option of a kind, in the order a summary lists them (object keys
 * keep their order): an option added to the contract does not typecheck until the UI says
 * how it reads.
 */
type OptionFormatters<Options> = { readonly [Name in keyof Options]-?: OptionFormatter };

function positive(format: (value: number) => string): OptionFormatter {
  return (value) => (typeof value === "number" && value > 0 ? format(value) : null);
}

function flag(label: string): OptionFormatter {
  return (value) => (value === true ? label : null);
}

function text(format: (value: string) => string): OptionFormatter {
  return (value) => (typeof value === "string" && value !== "" ? format(value) : null);
}

function asOptionValue(value: unknown): OptionValue | undefined {
  return value === null || typeof value === "string" || typeof value === "number" || typeof value === "boolean"
    ? value
    : undefined;
}

function asSpec(spec: unknown): Record<string, unknown> {
  return typeof spec === "object" && spec !== null && !Array.isArray(spec) ? (spec as Record<string, unknown>) : {};
}

function asWritten(name: string, value: unknown): string {
  return `${name} ${JSON.stringify(value)}`;
}

function kind<Options>(label: string, options: OptionFormatters<Options>): TestKindView {
  const formatters: readonly (readonly [string, OptionFormatter])[] = Object.entries(options);
  const known = new Set(formatters.map(([name]) => name));
  return {
    label,
    summarizeSpec(spec) {
      const record = asSpec(spec);
      const words: string[] = [];
      for (const [name, format] of formatters) {
        const value = asOptionValue(record[name]);
        const word = value === undefined ? null : format(value);
        if (word !== null) {
          words.push(word);
        }
      }
      for (const [name, value] of Object.entries(record)) {
        if (!known.has(name)) {
          words.push(asWritten(name, value));
        }
      }
      return words;
    },
  };
}

/**
 * Options the server or the agent fills in (readOnly in the contract): meshes cannot set
 * them, so a mesh's spec never holds them.
 */
type ServerSet = "path_rtt_ms" | "connect_timeout_ms" | "src_port_base" | "ramp_bps" | "streams_probe";

const throughput = kind<Omit<ThroughputOptions, ServerSet>>("throughput", {
  duration_s: positive(formatSpan),
  udp: flag("UDP"),
  // A configured rate keeps its second decimal, so it reads as written.
  bitrate_bps: positive((bps) => `at ${formatRate(bps, 2)}`),
  parallel: positive((streams) => (streams > 1 ? `${streams} streams` : "1 stream")),
  reverse: flag("reverse"),
  window_bytes: positive((bytes) => `window ${formatBytes(bytes)}`),
  omit_s: positive((seconds) => `omit ${formatSpan(seconds)}`),
  congestion: text((algorithm) => `congestion ${algorithm}`),
  mss: positive((bytes) => `MSS ${bytes}`),
  fq_rate_bps: positive((bps) => `paced at ${formatRate(bps, 2)}`),
  port: positive((port) => `port ${port}`),
});

const ping = kind<PingOptions>("ping", {
  count: positive((packets) => `${packets} packets`),
  interval_s: positive((seconds) => `${formatSpan(seconds)} apart`),
  size_bytes: positive((bytes) => `${bytes} B`),
  ttl: positive((ttl) => `TTL ${ttl}`),
});

const flowsweep = kind<FlowsweepOptions>("flowsweep", {
  protocol: text((protocol) => protocol.toUpperCase()),
  flows: positive((flows) => `${flows} flows`),
  samples_per_flow: positive((samples) => `${samples} samples per flow`),
  interval_ms: positive((ms) => `${ms} ms apart`),
  timeout_ms: positive((ms) => `timeout ${ms} ms`),
  port: positive((port) => `port ${port}`),
});

const trace = kind<Omit<TraceOptions, ServerSet>>("trace", {
  flows: positive((flows) => `${flows} flows`),
  queries: positive((queries) => `${queries} per hop`),
  wait_s: positive((seconds) => `wait ${formatSpan(seconds)}`),
  max_hops: positive((hops) => `up to ${hops} hops`),
  dst_port: positive((port) => `port ${port}`),
});

const latency = kind<LatencyOptions>("latency", {
  packet_interval_s: positive((seconds) => `${Math.round(1 / seconds)} packets/s`),
  packet_timeout_s: positive((seconds) => `timeout ${formatSpan(seconds)}`),
  size_bytes: positive((bytes) => `${bytes} B`),
  dscp: positive((dscp) => `DSCP ${dscp}`),
  port: positive((port) => `port ${port}`),
  report_interval_s: positive((seconds) => `reported every ${formatSpan(seconds)}`),
});

/** One entry per kind of the contract: a kind added there does not typecheck until it has one here. */
export const TEST_KINDS: Readonly<Record<TestKind, TestKindView>> = { ping, throughput, flowsweep, trace, latency };

export function isTestKind(type: string): type is TestKind {
  return (testKindValues as readonly string[]).includes(type);
}

/** A kind newer than this UI: its own name, and every option as written. */
function unknownKind(type: string): TestKindView {
  return {
    label: type,
    summarizeSpec: (spec) => Object.entries(asSpec(spec)).map(([name, value]) => asWritten(name, value)),
  };
}

/** How the UI shows a test of this type; never fails, whatever the server sends. */
export function testKind(type: string): TestKindView {
  return isTestKind(type) ? TEST_KINDS[type] : unknownKind(type);
}
