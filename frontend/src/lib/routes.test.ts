import { describe, expect, it } from "vitest";

import { ROUTE_A, ROUTE_B, ROUTES, hop } from "../test/routeFixtures";
import { currentRoutes, formatAs, latestFlowCount, routeDiff, routeTimeline } from "./routes";

describe("routeDiff", () => {
  it("aligns two routes by TTL and marks where another router answered", () => {
    const rows = routeDiff(ROUTE_A, ROUTE_B);
    expect(rows.map((row) => [row.ttl, row.left?.address, row.right?.address, row.same])).toEqual([
      [1, "198.18.128.1", "198.18.128.2", false],
      [2, "198.18.2.1", "198.18.2.1", true],
    ]);
  });

  it("leaves a side empty where one route is longer, and unanswered hops never match", () => {
    const longer = { ...ROUTE_B, hops: [...ROUTE_B.hops, hop(3, "198.18.3.1")] };
    const silent = { ...ROUTE_A, hops: [hop(1, null), hop(2, null)] };
    const rows = routeDiff(silent, longer);
    expect(rows.map((row) => [row.ttl, row.left === null ? "none" : row.left.address, row.right?.address, row.same])).toEqual([
      [1, null, "198.18.128.2", false],
      [2, null, "198.18.2.1", false],
      [3, "none", "198.18.3.1", false],
    ]);
  });
});

describe("the routes now and over time", () => {
  it("names the newest run's routes, most flows first, with its flow count", () => {
    expect(currentRoutes(ROUTES).map((route) => route.label)).toEqual(["A", "B"]);
    expect(latestFlowCount(ROUTES)).toBe(16);
  });

  it("draws one marker per run and route, and a line per change", () => {
    const figure = routeTimeline(ROUTES);
    expect(figure.data.map((trace) => trace.name)).toEqual(["route A", "route B"]);
    expect((figure.data[1] as { x: string[] }).x).toEqual(["2026-11-22T11:40:00Z", "2026-11-22T12:00:00Z"]);
    expect(figure.layout.shapes).toHaveLength(2);
  });

  it("writes an AS as the tracer reported it", () => {
    expect(formatAs(ROUTE_A.hops[0] ?? hop(1, null))).toBe("AS5408 GRNET");
    expect(formatAs(hop(1, "x", { asn: 20965 }))).toBe("AS20965");
    expect(formatAs(hop(1, "x"))).toBe("");
  });
});
