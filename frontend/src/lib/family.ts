// A path's address family. A dual-stack pair is two paths, IPv4 and IPv6: their routes, MTUs
// and policers differ, so every path link and query names its family. IPv4 is the default
// everywhere (paths from before IPv6, and URLs without `family`), so only IPv6 is spelled out.

export type Family = 4 | 6;

export const FAMILIES: readonly Family[] = [4, 6];

/** "IPv4" or "IPv6". */
export function familyLabel(family: number): string {
  return family === 6 ? "IPv6" : "IPv4";
}

/** The family a URL's `family` parameter names: 6 for "6", else IPv4. */
export function familyFromParams(params: URLSearchParams): Family {
  return params.get("family") === "6" ? 6 : 4;
}

/** Adds `family` to an API query or a page link when it is not the default (IPv4). */
export function withFamily(params: URLSearchParams, family: number): URLSearchParams {
  if (family === 6) {
    params.set("family", "6");
  } else {
    params.delete("family");
  }
  return params;
}

/** The family of an IP address as the server names agents' addresses (an IPv6 literal has a colon). */
export function addressFamily(address: string): Family {
  return address.includes(":") ? 6 : 4;
}

/** An agent's addresses as GET /agents/ lists them: its primary and those in its other families. */
export interface AgentAddresses {
  address: string;
  other_addresses?: readonly string[];
}

/** Every address an agent measures from, its primary first. */
export function agentAddresses(agent: AgentAddresses): string[] {
  return [agent.address, ...(agent.other_addresses ?? [])];
}

/** The families two agents both have an address in, IPv4 first: the paths between them. */
export function sharedFamilies(a: AgentAddresses, b: AgentAddresses): Family[] {
  const families = (agent: AgentAddresses) => new Set(agentAddresses(agent).map(addressFamily));
  const ofA = families(a);
  const ofB = families(b);
  return FAMILIES.filter((family) => ofA.has(family) && ofB.has(family));
}
