import { describe, expect, it } from "vitest";

import { testKindValues } from "../api/contract";
import { TEST_KINDS, isTestKind, testKind } from "./testKinds";

describe("the test kind registry", () => {
  it("has one entry per kind of the contract, under the kind's own name", () => {
    expect(Object.keys(TEST_KINDS).sort()).toEqual([...testKindValues].sort());
    for (const type of testKindValues) {
      expect(testKind(type)).toBe(TEST_KINDS[type]);
      expect(testKind(type).label).toBe(type);
    }
  });

  it("knows the contract's kinds and nothing else", () => {
    expect(isTestKind("flowsweep")).toBe(true);
    expect(isTestKind("latencybg")).toBe(false);
    expect(isTestKind("toString")).toBe(false);
  });

  it("shows a kind newer than this UI under its own name, options as written", () => {
    const rtt = testKind("rtt");
    expect(rtt.label).toBe("rtt");
    expect(rtt.summarizeSpec({ count: 10, ip_version: 4, dest: "dcb" })).toEqual([
      "count 10",
      "ip_version 4",
      'dest "dcb"',
    ]);
    expect(rtt.summarizeSpec(null)).toEqual([]);
    expect(testKind("constructor").label).toBe("constructor");
  });
});

describe("summarizeSpec", () => {
  const { throughput, ping, flowsweep, trace } = TEST_KINDS;

  it("reads throughput options in a fixed order", () => {
    const spec = { parallel: 4, duration_s: 20, window_bytes: 4 * 1024 * 1024, reverse: true };
    expect(throughput.summarizeSpec(spec)).toEqual(["20 s", "4 streams", "reverse", "window 4 MiB"]);
  });

  it("reads UDP at a rate and pacing, configured rates to two decimals", () => {
    expect(throughput.summarizeSpec({ udp: true, bitrate_bps: 2.5e9, fq_rate_bps: 5e8 })).toEqual([
      "UDP",
      "at 2.5 Gbit/s",
      "paced at 500 Mbit/s",
    ]);
    expect(throughput.summarizeSpec({ fq_rate_bps: 1.25e9 })).toEqual(["paced at 1.25 Gbit/s"]);
  });

  it("reads ping, flow sweep and trace options", () => {
    expect(ping.summarizeSpec({ count: 10, interval_s: 0.2, ttl: null })).toEqual(["10 packets", "0.2 s apart"]);
    expect(flowsweep.summarizeSpec({ protocol: "tcp", port: 443, flows: 16 })).toEqual(["TCP", "16 flows", "port 443"]);
    expect(trace.summarizeSpec({ flows: 8, max_hops: 30, dst_port: 33434 })).toEqual([
      "8 flows",
      "up to 30 hops",
      "port 33434",
    ]);
  });

  it("leaves out values that mean the default", () => {
    expect(
      throughput.summarizeSpec({ duration_s: 20, omit_s: 0, udp: false, congestion: "", window_bytes: 0 }),
    ).toEqual(["20 s"]);
  });

  it("shows options it does not know as written, another kind's included", () => {
    expect(throughput.summarizeSpec({ duration_s: 10, tos: 32 })).toEqual(["10 s", "tos 32"]);
    expect(ping.summarizeSpec({ count: 5, max_hops: 30 })).toEqual(["5 packets", "max_hops 30"]);
  });

  it("has nothing to say about an empty or malformed spec", () => {
    expect(throughput.summarizeSpec({})).toEqual([]);
    expect(throughput.summarizeSpec(null)).toEqual([]);
    expect(throughput.summarizeSpec([1, 2])).toEqual([]);
  });
});
