// Shared fixtures of the perfSONAR tests: a node as GET /perfsonar/nodes/ answers it.
import type { PerfsonarNode } from "../../api/perfsonar";

export function nodeFixture(name: string, extra: Partial<PerfsonarNode> = {}): PerfsonarNode {
  return {
    name,
    kind: "perfsonar",
    address: "198.18.7.7",
    api_url: `https://${name}.example.net/pscheduler`,
    tls_mode: "system",
    pinned_sha256: "",
    has_ca_bundle: false,
    created_at: "2026-05-01T00:00:00Z",
    checked_at: new Date(Date.now() - 120_000).toISOString(),
    reachable: true,
    api_level: 5,
    hostname: `${name}.example.net`,
    tests: ["rtt", "throughput", "trace"],
    tools: ["iperf3", "ping", "traceroute"],
    archivers: ["http"],
    clock_offset_s: 0.004,
    clock_synchronized: true,
    last_error: "",
    last_error_at: null,
    last_push_at: new Date(Date.now() - 300_000).toISOString(),
    last_poll_at: null,
    problems: [],
    tasks: { active: 3, refused: 0, unanswered: 0 },
    removing_since: null,
    ...extra,
  };
}
