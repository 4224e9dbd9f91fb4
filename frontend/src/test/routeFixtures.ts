// Two ECMP members of dca -> dcb as GET /paths/routes/ returns them, for the Routes view's tests.
import type { PathRoutes, Route, RouteHop } from "../api/routeQueries";
import { DESTINATION, SOURCE } from "./analysisFixtures";

export function hop(ttl: number, address: string | null, fields: Partial<RouteHop> = {}): RouteHop {
  return {
    ttl,
    address,
    other_addresses: [],
    rtt_ms: address === null ? null : 7.8 + ttl,
    hostname: null,
    asn: null,
    as_owner: null,
    mtu: null,
    ...fields,
  };
}

function route(label: string, hops: RouteHop[], fields: Partial<Route> = {}): Route {
  return {
    label,
    fingerprint: `fp-${label}`,
    reached: true,
    hops,
    first_seen: "2026-11-22T10:00:00Z",
    last_seen: "2026-11-22T12:00:00Z",
    runs: 3,
    flows: 36,
    latest_flows: 12,
    path_mtu: null,
    unanswered_hops: hops.filter((item) => item.address === null).length,
    ...fields,
  };
}

export const ROUTE_A = route("A", [
  hop(1, "198.18.128.1", { hostname: "r1.grnet.example", asn: 5408, as_owner: "GRNET", mtu: 9000 }),
  hop(2, "198.18.2.1", { mtu: 1500 }),
], { path_mtu: 1500 });
export const ROUTE_B = route("B", [hop(1, "198.18.128.2"), hop(2, "198.18.2.1")], { latest_flows: 4, flows: 12 });

export const ROUTES: PathRoutes = {
  source: SOURCE,
  destination: DESTINATION,
  family: 4,
  start: "2026-11-22T00:00:00Z",
  end: "2026-11-22T12:10:00Z",
  routes: [ROUTE_A, ROUTE_B],
  runs: [
    { time: "2026-11-22T11:40:00Z", run_id: "00000000-0000-4000-8000-000000000001", flows: { A: 12, B: 4 } },
    { time: "2026-11-22T11:50:00Z", run_id: "00000000-0000-4000-8000-000000000002", flows: { A: 16 } },
    { time: "2026-11-22T12:00:00Z", run_id: "00000000-0000-4000-8000-000000000003", flows: { A: 12, B: 4 } },
  ],
  changes: [
    { time: "2026-11-22T11:50:00Z", added: [], removed: ["B"] },
    { time: "2026-11-22T12:00:00Z", added: ["B"], removed: [] },
  ],
  truncated: false,
};
