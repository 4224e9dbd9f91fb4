// Analysis API responses for tests, typed as the server sends them: one path with two RTT
// modes and a receive-window limit, and the same path before anything was measured.
import type {
  Buffers,
  CeilingSet,
  CeilingsNow,
  Choice,
  Choices,
  Finding,
  GridCell,
  HostTuning,
  IntervalStats,
  MeshGrid,
  PathAnalysis,
  RunAnalysis,
  RunCeilings,
  RunEvidence,
  RunInputs,
} from "../api/queries";

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
  agent_kind: [],
  perfsonar_task_state: [],
  tls_mode: [],
  agent_status: [],
  alert_comparison: [],
  alert_metric: [],
  change_relation: [],
  alert_rule_kind: [],
  alert_severity: [],
  alert_state: [],
  delivery_status: [],
  incident_status: [],
  token_state: [],
  token_scope: [],
  role: [],
  audit_action: [],
  audit_object: [],
  run_status: [],
  slot_state: [],
  diagnosis: DIAGNOSES,
  rtt_mode_verdict: [
    { value: "single", label: "One RTT mode", color: "#1a7f37" },
    { value: "ecmp", label: "Bimodal RTT (ECMP)", color: "#bc4c00" },
    { value: "insufficient", label: "Too little data", color: "#6e7781" },
  ],
  finding_metric: [
    { value: "throughput", label: "Throughput", color: "#57606a" },
    { value: "rtt", label: "RTT", color: "#57606a" },
    { value: "ecmp", label: "ECMP members", color: "#57606a" },
  ],
  finding_state: [
    { value: "open", label: "Open", color: "#cf222e" },
    { value: "cleared", label: "Cleared", color: "#6e7781" },
  ],
};

/** A ceiling set as the server sends it, limited by the receive window at `rttMs`. */
export function ceilingSet(rttMs: number | null, receiveWindowBps: number | null, source = "RTT mode"): CeilingSet {
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

export const BUFFERS: Buffers = {
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

/** One host's tuning as the ceiling math read it: Linux 6.8, 6 MiB tcp_rmem max, a 10 Gbit/s link. */
export const TUNING: HostTuning = {
  kernel: "6.8.0-45-generic",
  tcp_rmem_default_bytes: 131072,
  tcp_rmem_max_bytes: 6291456,
  tcp_wmem_max_bytes: 4194304,
  rmem_max_bytes: 212992,
  wmem_max_bytes: 212992,
  adv_win_scale: 1,
  congestion_control: "cubic",
  mtu_bytes: 1500,
  link_rate_bps: 1e10,
  iperf3_version: "3.16",
  moderate_rcvbuf: true,
  window_scaling: true,
};

/** What the ceilings of a run from dca to dcb rest on: both hosts' tuning, RTT and loss. */
export const INPUTS: RunInputs = {
  streams: 1,
  sender: TUNING,
  receiver: TUNING,
  window_request_bytes: null,
  congestion_control: "cubic",
  mss_bytes: 1448,
  mtu_bytes: 1500,
  link_rate_bps: 1e10,
  run_min_rtt_ms: 7.9,
  run_mean_rtt_ms: 9.2,
  path_min_rtt_ms: 7.9,
  mode_rtts_ms: [7.9, 12.1],
  loss_fraction: 0,
  loss_source: "ping: 0 of 600 lost",
  max_snd_wnd_bytes: 3145728,
  sources: {
    sender_facts: "host facts of 2026-11-22 05:59:00",
    receiver_facts: "host facts of 2026-11-22 05:58:30",
    loss: "ping: 0 of 600 lost in the 6 h before",
    modes: "flow sweep 55555555-5555-4555-8555-555555555555 (ecmp)",
  },
};

export const INTERVAL_STATS: IntervalStats = {
  steady_rate_bps: 3.1e9,
  intervals: 20,
  window_limited_share: 1,
  retransmits: 0,
  retransmit_rate: 0,
  omitted_retransmits: null,
  retransmit_bursts: 0,
  cwnd_collapses: 0,
  rate_cv: 0.01,
  not_converged: false,
  pmtu_bytes: 1500,
};

export const RUN_EVIDENCE: RunEvidence = {
  label: "receive_window",
  rate_bps: 3.1e9,
  ceiling_bps: 3.19e9,
  winning_term: "receive_window",
  fraction_of_ceiling: 0.97,
  evidence: RW_EVIDENCE,
  not_converged: false,
  binding_bps: 3.19e9,
};

export function run(fields: Partial<RunAnalysis> & Pick<RunAnalysis, "run_id" | "started_at">): RunAnalysis {
  return {
    streams: 1,
    rate_bps: 3.1e9,
    ceiling_bps: 3.19e9,
    fraction_of_ceiling: 0.97,
    limit: "receive_window",
    diagnosis: "receive_window",
    evidence: RUN_EVIDENCE,
    ceilings: {
      buffers: BUFFERS,
      at_min_rtt: ceilingSet(7.9, 3.19e9, "the run's own minimum RTT (TCP_INFO)"),
      under_load: ceilingSet(9.2, 2.74e9, "mean RTT under load (TCP_INFO)"),
      per_mode: [],
      member: null,
      flow_above_path: null,
    },
    inputs: INPUTS,
    interval_stats: INTERVAL_STATS,
    iperf3_version: "3.16",
    ...fields,
  };
}

/**
 * The lab path: ECMP members at 23 and 31 ms, 4 MiB buffers, a run on the slow member
 * at 94% of that member's ceiling (its ceiling 74% of the fast member's).
 */
export const SLOW_MEMBER_RUN: RunAnalysis = run({
  run_id: "77777777-7777-4777-8777-777777777777",
  started_at: "2026-11-22T18:00:00Z",
  rate_bps: 0.7e9,
  ceiling_bps: 0.745e9,
  fraction_of_ceiling: 0.94,
  ceilings: {
    buffers: BUFFERS,
    at_min_rtt: ceilingSet(31, 0.745e9, "the flow's RTT mode 2 of 2 (flow sweep)"),
    under_load: null,
    per_mode: [ceilingSet(23, 1.0e9, "RTT mode 1 (flow sweep)"), ceilingSet(31, 0.745e9, "RTT mode 2 (flow sweep)")],
    member: { index: 2, count: 2, rtt_ms: 31, ceiling_bps: 0.745e9, scale: 0.745 },
    flow_above_path: null,
  },
});

export const FINDING: Finding = {
  id: 7,
  source: SOURCE,
  destination: DESTINATION,
  family: 4,
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
  evidence: {
    baseline_points: 30,
    baseline_from: "2026-11-15T06:00:00Z",
    baseline_median_bps: 9.1e9,
    prior: null,
    sigma_r_ln: 0.02,
    open_threshold_bps: 8.2e9,
    clear_threshold_bps: 8.9e9,
    confirm_n: 2,
    changed_bps: [3.1e9, 3.1e9],
    skipped_nonpositive: 0,
    skipped_nonfinite: 0,
    clear_confirmed_at: null,
  },
  annotation: "net.ipv4.tcp_rmem changed on dcb at 05:58",
};

/** Today's ceilings: limited by the receive window, one line per RTT mode. */
export const CEILINGS_NOW: CeilingsNow = {
  buffers: BUFFERS,
  at_min_rtt: ceilingSet(7.9, 3.19e9, "the path's minimum RTT (ping, flow sweep)"),
  under_load: null,
  per_mode: [ceilingSet(7.9, 3.19e9, "RTT mode 1 (flow sweep)"), ceilingSet(12.1, 2.08e9, "RTT mode 2 (flow sweep)")],
  member: null,
  flow_above_path: null,
  inputs: INPUTS,
  options_of_run: "33333333-3333-4333-8333-333333333333",
};

export const ANALYSIS: PathAnalysis = {
  source: SOURCE,
  destination: DESTINATION,
  family: 4,
  ceilings_now: CEILINGS_NOW,
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
      evidence: {
        label: "capacity",
        rate_bps: 9.1e9,
        ceiling_bps: 9.49e9,
        winning_term: "link",
        fraction_of_ceiling: 0.96,
        evidence: ["at the link ceiling"],
        not_converged: false,
        binding_bps: 9.49e9,
      },
      ceilings: { buffers: BUFFERS, at_min_rtt: ceilingSet(7.9, null), under_load: null, per_mode: [], member: null, flow_above_path: null },
    }),
  ],
  // The consensus of the path's recent runs with the newest run's options (not only the two above).
  path_label: {
    diagnosis: "receive_window",
    agreeing_runs: 9,
    runs: 11,
    share: 9 / 11,
    summary: "receive window (9 of 11 runs)",
  },
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
    shared_ceiling_bps: null,
  },
  streams_probe: null,
};

/** A path nothing has been measured on: every term unknown, no runs, no modes, no advice. */
export const EMPTY_ANALYSIS: PathAnalysis = {
  source: SOURCE,
  destination: DESTINATION,
  family: 4,
  ceilings_now: null,
  runs: [],
  path_label: null,
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
    time_modes: { kind: "none", levels_ms: [], change_times: [], reason: "" },
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
    shared_ceiling_bps: null,
  },
  streams_probe: null,
};

/**
 * Ceilings with every term unknown, as when neither host has reported facts; the buffers'
 * sources are blank, so a table shows what it says for a source the server left out.
 */
export const UNKNOWN_CEILINGS: RunCeilings = {
  buffers: {
    receive_bytes: null,
    receive_source: "",
    receive_fraction: null,
    receive_fraction_source: "",
    send_bytes: null,
    send_source: "",
    send_fraction: 0.5,
    send_fraction_source: "",
  },
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
  member: null,
  flow_above_path: null,
};

/** A host that has reported no facts. */
export const UNKNOWN_TUNING: HostTuning = {
  kernel: null,
  tcp_rmem_default_bytes: null,
  tcp_rmem_max_bytes: null,
  tcp_wmem_max_bytes: null,
  rmem_max_bytes: null,
  wmem_max_bytes: null,
  adv_win_scale: null,
  congestion_control: null,
  mtu_bytes: null,
  link_rate_bps: null,
  iperf3_version: null,
  moderate_rcvbuf: null,
  window_scaling: null,
};

/** The inputs of a run between two such hosts, with no RTT and no pings. */
export const UNKNOWN_INPUTS: RunInputs = {
  streams: 4,
  sender: UNKNOWN_TUNING,
  receiver: UNKNOWN_TUNING,
  window_request_bytes: null,
  congestion_control: null,
  mss_bytes: null,
  mtu_bytes: null,
  link_rate_bps: null,
  run_min_rtt_ms: null,
  run_mean_rtt_ms: null,
  path_min_rtt_ms: null,
  mode_rtts_ms: [],
  loss_fraction: null,
  loss_source: "no pings",
  max_snd_wnd_bytes: null,
  sources: { sender_facts: "no host facts", receiver_facts: "no host facts", loss: "no pings", modes: "no flow sweep" },
};

export type AgentRef = GridCell["source"];

/** One grid cell: a receive-window-limited path at 97% of its ceiling, with two RTT modes. */
export function gridCell(source: AgentRef, destination: AgentRef, fields: Partial<GridCell> = {}): GridCell {
  return {
    source,
    destination,
    family: 4,
    rate_bps: 3.1e9,
    ceiling_bps: 3.2e9,
    fraction_of_ceiling: 0.97,
    diagnosis: "receive_window",
    measured_at: "2026-11-22T12:00:00Z",
    loss_fraction: 0,
    forward_loss_fraction: null,
    rtt_median_ms: 7.9,
    mode_count: 2,
    rtt_mode_verdict: "ecmp",
    open_findings: 1,
    last_run_status: "ok",
    last_run_test_type: "ping",
    last_run_at: "2026-11-22T12:05:00Z",
    data_age_s: 300,
    stale: false,
    ...fields,
  };
}

/** The grid thresholds in force when a mesh sets none (meshes.thresholds' defaults). */
export const GRID_THRESHOLDS: MeshGrid["thresholds"] = {
  fraction_good: 0.9,
  fraction_bad: 0.5,
  rate_good_bps: 1e9,
  rate_bad_bps: 1e8,
  rtt_warn_ms: 100,
  rtt_crit_ms: 250,
  loss_warn: 0.001,
  loss_crit: 0.01,
  stale_after_s: 3600,
};
