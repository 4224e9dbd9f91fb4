import { describe, expect, it } from "vitest";

import { describeClock, formatClockError, isByteSysctl, parseHostFacts, sysctlBytes } from "./hostFacts";

describe("parseHostFacts", () => {
  it("reads what an agent reports", () => {
    const facts = parseHostFacts({
      hostname: "athens",
      kernel: "6.1.0-40-amd64",
      cpus: 8,
      iperf3_version: "3.12",
      iperf3_port: 5201,
      interfaces: [{ name: "eth0", mtu: 9000, speed_mbps: 10000, addresses: ["198.18.1.2/24"] }],
      sysctls: { "net.ipv4.tcp_rmem": "4096 131072 6291456", "net.core.default_qdisc": "fq_codel" },
    });
    expect(facts).toMatchObject({
      hostname: "athens",
      cpus: 8,
      iperf3Port: 5201,
      interfaces: [{ name: "eth0", mtu: 9000, speedMbps: 10000, addresses: ["198.18.1.2/24"] }],
    });
    expect(facts?.sysctls.map(([name]) => name)).toEqual(["net.core.default_qdisc", "net.ipv4.tcp_rmem"]);
  });

  it("ignores malformed parts instead of failing", () => {
    const facts = parseHostFacts({
      cpus: "eight",
      interfaces: [{ mtu: 1500 }, "eth0", { name: "lo", mtu: null, addresses: [1, "127.0.0.1/8"] }],
      sysctls: { "net.core.rmem_max": 212992 },
    });
    expect(facts).toMatchObject({ cpus: null, sysctls: [] });
    expect(facts?.interfaces).toEqual([{ name: "lo", mtu: null, speedMbps: null, addresses: ["127.0.0.1/8"] }]);
  });

  it.each([null, "facts", 42, [1, 2]])("has no facts for %j", (value) => {
    expect(parseHostFacts(value)).toBeNull();
  });
});

describe("the host clock", () => {
  const clockOf = (clock: unknown) => parseHostFacts({ clock })?.clock;

  it("reads each state the agent reports", () => {
    expect(clockOf({ synchronized: true, max_error_ms: 0.4, source: "kernel", readable: true })).toEqual({
      state: "synchronized",
      maxErrorMs: 0.4,
    });
    expect(clockOf({ synchronized: false, max_error_ms: 16000, source: "kernel", readable: true })).toEqual({
      state: "unsynchronized",
    });
    expect(clockOf({ synchronized: true, max_error_ms: 0.001, source: "shared", readable: true })).toEqual({ state: "shared" });
    expect(clockOf({ synchronized: false, max_error_ms: null, source: "kernel", readable: false })).toEqual({
      state: "unknown",
      reason: "unreadable",
    });
  });

  it("is unknown, never trusted, when missing or malformed", () => {
    expect(clockOf(undefined)).toEqual({ state: "unknown", reason: "unreported" });
    expect(clockOf("synchronized")).toEqual({ state: "unknown", reason: "unreported" });
    expect(clockOf({ synchronized: "yes", readable: true })).toEqual({ state: "unsynchronized" });
    expect(clockOf({ synchronized: true, max_error_ms: "0.4", readable: true })).toEqual({
      state: "synchronized",
      maxErrorMs: null,
    });
  });

  it("says it as the page shows it, warning only when not synchronized", () => {
    expect(describeClock({ state: "synchronized", maxErrorMs: 0.4 })).toEqual({
      text: "synchronized (±0.4 ms)",
      warning: false,
    });
    expect(describeClock({ state: "unsynchronized" })).toEqual({
      text: "not synchronized: one-way delays to and from this host are not trusted",
      warning: true,
    });
    expect(describeClock({ state: "shared" })).toEqual({ text: "shared lab clock", warning: false });
    expect(describeClock({ state: "unknown", reason: "unreadable" }).warning).toBe(false);
    expect(describeClock({ state: "unknown", reason: "unreported" }).text).toMatch(/^unknown/);
  });

  it("rounds the error to two significant digits", () => {
    expect(formatClockError(0.4)).toBe("±0.4 ms");
    expect(formatClockError(0.0123)).toBe("±0.012 ms");
    expect(formatClockError(12.34)).toBe("±12 ms");
    expect(formatClockError(16000)).toBe("±16 s");
  });
});

describe("sysctl byte values", () => {
  it("splits triples and single values", () => {
    expect(sysctlBytes("4096\t131072  6291456")).toEqual([4096, 131072, 6291456]);
    expect(sysctlBytes("212992")).toEqual([212992]);
    expect(sysctlBytes("cubic")).toBeNull();
    expect(sysctlBytes("")).toBeNull();
  });

  it("knows which sysctls are sizes", () => {
    expect(isByteSysctl("net.core.wmem_max")).toBe(true);
    expect(isByteSysctl("net.ipv4.tcp_adv_win_scale")).toBe(false);
  });
});
