import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { StatusBadge } from "../components/StatusBadge";
import { parseHostFacts } from "../lib/hostFacts";
import { HostFactsPanel } from "./AgentsPage";

describe("HostFactsPanel", () => {
  it("shows buffer sysctls in readable units", () => {
    const facts = parseHostFacts({
      kernel: "6.1.0",
      interfaces: [{ name: "eth0", mtu: 9000, speed_mbps: 10000, addresses: [] }],
      sysctls: { "net.ipv4.tcp_rmem": "4096 131072 6291456", "net.ipv4.tcp_congestion_control": "cubic" },
    });
    if (facts === null) {
      throw new Error("facts did not parse");
    }
    render(<HostFactsPanel facts={facts} collectedAt={null} />);
    expect(screen.getByText("(4 KiB / 128 KiB / 6 MiB)")).toBeDefined();
    expect(screen.getByText("10 Gbit/s")).toBeDefined();
    expect(screen.getByText("cubic")).toBeDefined();
    expect(screen.getByText("not installed")).toBeDefined();
  });
});

describe("StatusBadge", () => {
  it("uses the server's label and colour", () => {
    render(<StatusBadge choice={{ value: "offline", label: "Offline", color: "#d62728" }} />);
    const badge = screen.getByText("Offline");
    expect(badge.getAttribute("data-status")).toBe("offline");
    expect(badge.style.backgroundColor).toBe("rgb(214, 39, 40)");
  });
});
