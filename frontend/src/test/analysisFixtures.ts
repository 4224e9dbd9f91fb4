// Analysis API responses for tests: one path with two RTT modes and a receive-window limit,
// and the same path before anything was measured.
import type { Choice, Choices, Finding, GridCell, PathAnalysis, RunAnalysis } from "../api/queries";

export const SOURCE = { id: "11111111-1111-4111-8111-111111111111", name: "dca" };
export const DESTINATION = { id: "22222222-2222-4222-8222-222222222222", name: "dcb" };

export const DIAGNOSES: Choice[] = [
  { value: "receive_window", label: "Receive window limited", color: "#bc4c00" },
  { value: "send_buffer", label: "Send buffer limited", color: "#9a6700" },
  { value: "loss", label: "Loss limited", color: "#cf222e" },
  { value: "capacity", label: "Capacity limited", color: "#1a7f37" },
  { value: "policer", label: "Policer suspected", color: "#8250df" },
  { value: "below_ceilings", label: "Below every ceiling", color: "#0969da" },
  { value: "unknown", label: "Unknown", color: "#6e7781" },
];

export const CHOICES: Choices = {
  agent_status: [],
  token_state: [],
  run_status: [],
  slot_state: [],
  diagnosis: DIAGNOSES,
  rtt_mode_verdict: [
    { value: "single", label: "One RTT mode", color: "#1a7f37" },
    { value: "ecmp", label: "Bimodal RTT (ECMP)", color: "#bc4c00" },
    { value: "insufficient", label: "Too little data", color: "#6e7781" },
  ],
  finding_state: [
    { value: "open", label: "Open", color: "#cf222e" },
    { value: "cleared", label: "Cleared", color: "#6e7781" },
  ],
};

/** A ceiling set as the server sends it, limited by the receive window at `rttMs`. */
export function ceilingSet(rttMs: number | null, receiveWindowBps: number | null, source = "RTT mode") {
  const terms = {
    link: { rate_bps: 9.49e9, reason: "" },
    receive_window:
      receiveWindowBps === null
        ? { rate_bps: null, reason: "receive buffer size unknown" }
        : { rate_bps: receiveWindowBps, reason: "" },
    send_buffer: { rate_bps: 2 * (receiveWindowBps ?? 3e9), reason: "" },
    loss: { rate_bps: null, reason: "no loss measured: the loss ceiling has no finite bound" },
  };
  const limit = receiveWindowBps === null ? "link" : "receive_window";
  return {
    rtt_ms: rttMs,
    rtt_source: source,
    limit,
    ceiling_bps: receiveWindowBps ?? 9.49e9,
    terms,
  };
}

export const BUFFERS = {
  receive_bytes: 6291456,
  receive_source: "net.ipv4.tcp_rmem max (autotuning)",
  receive_fraction: 0.5,
  receive_fraction_source: "kernel 6.8 scaling_ratio (planning value 0.5)",
  send_bytes: 4194304,
  send_source: "net.ipv4.tcp_wmem max (autotuning)",
  send_fraction: 0.5,
  send_fraction_source: "planning value 0.5",
};

export const RW_EVIDENCE = [
  "3.10 Gbit/s is within 10% of the receive-window ceiling 3.19 Gbit/s at 7.9 ms",
  "tcp_rmem max 6 MiB on dcb with scaling_ratio 0.5 gives a 3 MiB window",
  "the link allows 9.49 Gbit/s",
];

export function run(fields: Partial<RunAnalysis> & Pick<RunAnalysis, "run_id" | "started_at">): RunAnalysis {
  return {
    streams: 1,
    rate_bps: 3.1e9,
    ceiling_bps: 3.19e9,
    fraction_of_ceiling: 0.97,
    limit: "receive_window",
    diagnosis: "receive_window",
    evidence: {
      label: "receive_window",
      rate_bps: 3.1e9,
      ceiling_bps: 3.19e9,
      winning_term: "receive_window",
      fraction_of_ceiling: 0.97,
      evidence: RW_EVIDENCE,
      not_converged: false,
    },
    ceilings: {
      buffers: BUFFERS,
      at_min_rtt: ceilingSet(7.9, 3.19e9, "the run's own minimum RTT (TCP_INFO)"),
      under_load: ceilingSet(9.2, 2.74e9, "mean RTT under load (TCP_INFO)"),
      per_mode: [],
    },
    inputs: {},
    interval_stats: {},
    iperf3_version: "3.16",
    ...fields,
  };
}

export const FINDING: Finding = {
  id: 7,
  source: SOURCE,
  destination: DESTINATION,
  metric: "throughput",
  rules: ["cusum", "level"],
  kind: "annotation",
  state: "open",
  started_at: "2026-11-22T06:00:00Z",
  detected_at: "2026-11-22T12:00:00Z",
  cleared_at: null,
  direction: "down",
  baseline: 9.1e9,
  current: 3.1e9,
  magnitude: -0.66,
  unit: "relative",
  evidence: {},
  annotation: "net.ipv4.tcp_rmem changed on dcb at 05:58",
};

export const ANALYSIS: PathAnalysis = {
  source: SOURCE,
  destination: DESTINATION,
  ceilings_now: {
    buffers: BUFFERS,
    at_min_rtt: ceilingSet(7.9, 3.19e9, "the path's minimum RTT (ping, flow sweep)"),
    under_load: null,
    per_mode: [ceilingSet(7.9, 3.19e9, "RTT mode 1 (flow sweep)"), ceilingSet(12.1, 2.08e9, "RTT mode 2 (flow sweep)")],
    inputs: {},
    options_of_run: "33333333-3333-4333-8333-333333333333",
  },
  runs: [
    run({ run_id: "33333333-3333-4333-8333-333333333333", started_at: "2026-11-22T12:00:00Z" }),
    run({
      run_id: "44444444-4444-4444-8444-444444444444",
      started_at: "2026-11-22T06:00:00Z",
      rate_bps: 9.1e9,
      ceiling_bps: 9.49e9,
      fraction_of_ceiling: 0.96,
      limit: "link",
      diagnosis: "capacity",
      evidence: { label: "capacity", evidence: ["at the link ceiling"] },
      ceilings: { buffers: BUFFERS, at_min_rtt: ceilingSet(7.9, null), under_load: null, per_mode: [] },
    }),
  ],
  modes: {
    verdict: "ecmp",
    sweep_run_id: "55555555-5555-4555-8555-555555555555",
    sweep_started_at: "2026-11-22T11:45:00Z",
    reason: "two RTT clusters 4.2 ms apart (Kruskal-Wallis p < 0.001)",
    choice: "newest sweep",
    held_by_sweeps: 0,
    modes: [
      {
        rtt_ms: 7.9,
        min_rtt_ms: 7.8,
        flow_count: 40,
        share: 0.625,
        src_ports: [40001, 40002],
        trace_path: ["10.0.0.1", "10.1.0.1", "10.2.0.2"],
        ceiling: ceilingSet(7.9, 3.19e9),
      },
      {
        rtt_ms: 12.1,
        min_rtt_ms: 12.0,
        flow_count: 24,
        share: 0.375,
        src_ports: [40003],
        trace_path: null,
        ceiling: ceilingSet(12.1, 2.08e9),
      },
    ],
    sweeps: 96,
    ecmp_sweeps: 90,
    ping_dip: { candidate: true, p_value: 0.003, samples: 2880, reason: "pooled pings are bimodal" },
    time_modes: { kind: "none", levels_ms: [], change_times: [], reason: "" },
  },
  findings: [FINDING],
  goal_bps: 1e10,
  advice: [
    {
      kind: "sysctl",
      where: "dcb",
      setting: "net.ipv4.tcp_rmem",
      value: "4096 131072 31457280",
      reason: "2 x BDP for 10.00 Gbit/s at 12.1 ms",
    },
  ],
  capacity_plan: {
    daily_volume_bytes: 13 * 2 ** 40,
    required_bps: 1.32e9,
    rate_bps: 3.1e9,
    streams: 1,
    per_stream_bps: 3.1e9,
    hours_per_day: 10.2,
    streams_needed: 1,
    backlog_grows: false,
    reason: "13.0 TiB/day needs 1.32 Gbit/s; at 3.10 Gbit/s (1 x 3.10 Gbit/s) it takes 10.2 h a day: the volume fits",
    notes: [],
  },
};

/** A path nothing has been measured on: every term unknown, no runs, no modes, no advice. */
export const EMPTY_ANALYSIS: PathAnalysis = {
  source: SOURCE,
  destination: DESTINATION,
  ceilings_now: null,
  runs: [],
  modes: {
    verdict: "insufficient",
    sweep_run_id: null,
    sweep_started_at: null,
    reason: "no flow sweep in the last 24 h",
    choice: "",
    held_by_sweeps: 0,
    modes: [],
    sweeps: 0,
    ecmp_sweeps: 0,
    ping_dip: { candidate: false, p_value: null, samples: 0, reason: "too few pings" },
    time_modes: {},
  },
  findings: [],
  goal_bps: null,
  advice: [],
  capacity_plan: {
    daily_volume_bytes: 13 * 2 ** 40,
    required_bps: 1.32e9,
    rate_bps: null,
    streams: 1,
    per_stream_bps: null,
    hours_per_day: null,
    streams_needed: null,
    backlog_grows: null,
    reason: "no throughput measured yet",
    notes: [],
  },
};

/** Ceilings now with every term unknown, as when neither host has reported facts. */
export const UNKNOWN_CEILINGS = {
  buffers: {},
  at_min_rtt: {
    rtt_ms: null,
    rtt_source: "no RTT measured",
    limit: "unknown",
    ceiling_bps: null,
    terms: {
      link: { rate_bps: null, reason: "link speed unknown" },
      receive_window: { rate_bps: null, reason: "receive buffer size unknown" },
      send_buffer: { rate_bps: null, reason: "send buffer size unknown" },
      loss: { rate_bps: null, reason: "loss not measured" },
    },
  },
  under_load: null,
  per_mode: [],
};

export type AgentRef = GridCell["source"];

/** One grid cell: a receive-window-limited path at 97% of its ceiling, with two RTT modes. */
export function gridCell(source: AgentRef, destination: AgentRef, fields: Partial<GridCell> = {}): GridCell {
  return {
    source,
    destination,
    rate_bps: 3.1e9,
    ceiling_bps: 3.2e9,
    fraction_of_ceiling: 0.97,
    diagnosis: "receive_window",
    measured_at: "2026-11-22T12:00:00Z",
    loss_fraction: 0,
    mode_count: 2,
    rtt_mode_verdict: "ecmp",
    open_findings: 1,
    ...fields,
  };
}
