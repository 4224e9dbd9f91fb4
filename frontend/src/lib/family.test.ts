import { describe, expect, it } from "vitest";

import { addressFamily, agentAddresses, familyFromParams, familyLabel, sharedFamilies, withFamily } from "./family";

describe("address families", () => {
  it("reads IPv6 from a URL and takes IPv4 for anything else", () => {
    expect(familyFromParams(new URLSearchParams("family=6"))).toBe(6);
    expect(familyFromParams(new URLSearchParams("family=4"))).toBe(4);
    expect(familyFromParams(new URLSearchParams("family=ipv6"))).toBe(4);
    expect(familyFromParams(new URLSearchParams(""))).toBe(4);
    expect([familyLabel(4), familyLabel(6)]).toEqual(["IPv4", "IPv6"]);
  });

  it("spells out IPv6 only: IPv4 links stay as they were before IPv6", () => {
    expect(withFamily(new URLSearchParams("range=24h"), 6).toString()).toBe("range=24h&family=6");
    expect(withFamily(new URLSearchParams("range=24h&family=6"), 4).toString()).toBe("range=24h");
  });

  it("finds the families two agents share: a dual-stack pair is two paths", () => {
    const lisbon = { address: "198.18.0.1", other_addresses: ["2001:2::1"] };
    const oslo = { address: "198.18.0.2", other_addresses: ["2001:2::2"] };
    const single = { address: "198.18.0.3" };
    expect(sharedFamilies(lisbon, oslo)).toEqual([4, 6]);
    expect(sharedFamilies(lisbon, single)).toEqual([4]);
    expect(agentAddresses(lisbon)).toEqual(["198.18.0.1", "2001:2::1"]);
    expect([addressFamily("2001:2::1"), addressFamily("198.18.0.1")]).toEqual([6, 4]);
  });
});
