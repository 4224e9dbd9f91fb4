// A path timeline (GET /analysis/path/timeline/) for the figure and page tests: TCP runs each
// way around a retune of dcb, a paced UDP run and an 8-stream run, one ECMP sweep with two
// modes, an iperf3 upgrade and a finding.
import type { PathTimeline, TimelineRun } from "../api/timelineQueries";
import { DESTINATION, FINDING, SOURCE } from "./analysisFixtures";

export function timelineRun(t: string, rate: number, overrides: Partial<TimelineRun> = {}): TimelineRun {
  return {
    t, run_id: `run-${t}`, protocol: "tcp", paced: false, streams: 1, rate_bps: rate, offered_bps: null,
    lost_fraction: null, iperf3_version: "3.12", client: SOURCE, diagnosis: "receive_window", limit: "receive_window",
    ceiling_bps: 3.3e9, ceiling_under_load_bps: 3.1e9,
    terms: { link: 9.4e9, receive_window: 3.3e9, send_buffer: 8e9, loss: null }, ramp: null, ramp_lower_bound: null,
    ...overrides,
  };  // prettier-ignore
}

export const TIMELINE: PathTimeline = {
  source: SOURCE,
  destination: DESTINATION,
  family: 4,
  from: "2026-11-22T00:00:00Z",
  to: "2026-11-22T12:00:00Z",
  run_cap: 1500,
  forward: {
    runs: [
      timelineRun("2026-11-22T01:00:00Z", 3.2e9),
      timelineRun("2026-11-22T05:00:00Z", 6.1e9, { ceiling_bps: 6.6e9, ceiling_under_load_bps: 6.2e9 }),
      timelineRun("2026-11-22T06:00:00Z", 7.9e9, { streams: 8, ceiling_bps: 9.4e9, limit: "link", diagnosis: "capacity" }),
      timelineRun("2026-11-22T07:00:00Z", 4.5e8, { protocol: "udp", paced: true, offered_bps: 5e8, lost_fraction: 0.1,
        diagnosis: null, limit: null, ceiling_bps: null, ceiling_under_load_bps: null, terms: null }),
    ],
    runs_capped: false,
    sweeps: [
      { t: "2026-11-22T02:00:00Z", verdict: "ecmp", modes: [{ rtt_ms: 8, share: 0.75, flow_count: 12 }, { rtt_ms: 12, share: 0.25, flow_count: 4 }] },
      { t: "2026-11-22T03:00:00Z", verdict: "single", modes: [{ rtt_ms: 8, share: 1, flow_count: 16 }] },
    ],
    sweeps_capped: false,
  },
  reverse: {
    runs: [timelineRun("2026-11-22T02:00:00Z", 2e9, { client: DESTINATION })],
    runs_capped: true,
    sweeps: [],
    sweeps_capped: false,
  },
  iperf3_changes: [{ t: "2026-11-22T04:30:00Z", agent: SOURCE, old: "3.12", new: "3.16" }],
  tuning_changes: [
    { t: "2026-11-22T04:00:00Z", agent: DESTINATION,
      changes: { "net.ipv4.tcp_rmem": ["4096 131072 6291456", "4096 131072 12582912"], kernel: ["6.1", "6.12"] } },
  ],  // prettier-ignore
  tuning_capped: false,
  findings: [
    {
      id: FINDING.id, path_direction: "forward", metric: FINDING.metric, kind: FINDING.kind, state: FINDING.state,
      started_at: FINDING.started_at, detected_at: FINDING.detected_at, cleared_at: FINDING.cleared_at,
      rules: FINDING.rules, direction: FINDING.direction, baseline: FINDING.baseline, current: FINDING.current,
      magnitude: FINDING.magnitude, unit: FINDING.unit, annotation: "dcb's host changed", evidence: FINDING.evidence,
    },
  ],  // prettier-ignore
  findings_capped: false,
  own_load: [
    { start: "2026-11-22T02:00:00Z", end: "2026-11-22T02:00:13Z", tests: ["dca->dcb"] },
    { start: "2026-11-22T02:30:00Z", end: "2026-11-22T02:30:29Z", tests: ["dcc->dca", "dcb->dca"] },
  ],
  own_load_capped: false,
};
