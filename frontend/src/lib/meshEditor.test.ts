import { describe, expect, it } from "vitest";

import { testOptionsSchemas } from "../api/contract";
import {
  draftFromMesh,
  meshPayload,
  newMeshDraft,
  newTestDraft,
  parseTargets,
  uniqueName,
  withMember,
  withSide,
  withTestType,
  type Mesh,
} from "./meshEditor";
import {
  describePath,
  draftErrors,
  entryChanges,
  formatInterval,
  isPlacedError,
  isSelectableAgent,
  memberErrors,
  secondsHint,
  targetErrors,
} from "./meshErrors";
import { checkOption, optionFields, optionFieldsOf, type OptionField } from "./meshOptions";

const MESH: Mesh = {
  name: "backbone",
  description: "core sites",
  kind: "disjoint",
  all_agents: false,
  unidirectional: true,
  targets: [],
  enabled: true,
  members: [
    { agent: "dca", side: "a" },
    { agent: "dcb", side: "b" },
  ],
  tests: [
    {
      name: "throughput",
      test_type: "throughput",
      spec: { duration_s: 20, reverse: false, congestion: "bbr", future_option: [1, 2] },
      interval_s: 21_600,
      slip_s: 21_600,
      enabled: true,
    },
    { name: "ping", test_type: "ping", spec: { count: 10, interval_s: 0.5 }, interval_s: 300, slip_s: 0, enabled: false },
  ],
};

function field(kind: keyof typeof testOptionsSchemas, name: string): OptionField {
  const found = optionFields(testOptionsSchemas[kind]).find((item) => item.name === name);
  if (found === undefined) {
    throw new Error(`no field ${name}`);
  }
  return found;
}

describe("option fields from the contract", () => {
  it("leaves out the options the server or the agent sets", () => {
    const names = optionFieldsOf("throughput").map((item) => item.name);
    expect(names).toContain("duration_s");
    expect(names).not.toContain("path_rtt_ms");
    expect(names).not.toContain("connect_timeout_ms");
    expect(optionFieldsOf("trace").map((item) => item.name)).not.toContain("src_port_base");
    expect(optionFieldsOf("no-such-kind")).toEqual([]);
  });

  it("reads types, bounds, defaults and descriptions", () => {
    expect(field("throughput", "duration_s")).toMatchObject({
      input: "integer",
      minimum: 1,
      maximum: 300,
      default: 20,
      zeroAllowed: false,
      description: "measured seconds (iperf3 -t)",
    });
    expect(field("ping", "interval_s")).toMatchObject({ input: "number", minimum: 0.2, maximum: 60 });
    expect(field("ping", "ttl")).toMatchObject({ input: "integer", default: null, minimum: 1, maximum: 255 });
    expect(field("throughput", "reverse")).toMatchObject({ input: "boolean", default: false });
    expect(field("flowsweep", "protocol")).toMatchObject({ input: "enum", values: ["udp", "tcp"], default: "udp" });
    expect(field("throughput", "congestion")).toMatchObject({
      input: "string",
      pattern: "^[a-z0-9_]{0,32}$",
      patternMessage: expect.stringContaining("congestion control name") as string,
    });
  });

  it("reads 'zero or a range' from anyOf", () => {
    expect(field("throughput", "mss")).toMatchObject({ zeroAllowed: true, minimum: 88, maximum: 65495 });
  });

  it("checks values as the schema does", () => {
    const duration = field("throughput", "duration_s");
    expect(checkOption(duration, "")).toBeNull();
    expect(checkOption(duration, "20")).toBeNull();
    expect(checkOption(duration, "0")).toBe("must be at least 1");
    expect(checkOption(duration, "301")).toBe("must be at most 300");
    expect(checkOption(duration, "2.5")).toBe("must be a whole number");
    expect(checkOption(duration, "abc")).toBe("must be a number");
    expect(checkOption(field("ping", "interval_s"), "0.5")).toBeNull();
    expect(checkOption(field("ping", "interval_s"), "0.1")).toBe("must be at least 0.2");
    const mss = field("throughput", "mss");
    expect(checkOption(mss, "0")).toBeNull();
    expect(checkOption(mss, "1400")).toBeNull();
    expect(checkOption(mss, "40")).toBe("must be 0 or from 88 to 65495");
    expect(checkOption(field("flowsweep", "protocol"), "icmp")).toBe("must be one of udp, tcp");
    expect(checkOption(field("throughput", "congestion"), "BBR!")).toContain("congestion control name");
    expect(checkOption(field("throughput", "congestion"), "bbr")).toBeNull();
    expect(checkOption(field("throughput", "reverse"), true)).toBeNull();
  });
});

describe("form state and mesh JSON", () => {
  it("round-trips a mesh, unknown options included", () => {
    expect(meshPayload(draftFromMesh(MESH))).toEqual(MESH);
  });

  it("holds options as typed, unknown ones apart", () => {
    const draft = draftFromMesh(MESH);
    expect(draft.tests[0]?.options).toEqual({ duration_s: "20", reverse: false, congestion: "bbr" });
    expect(draft.tests[0]?.extra).toEqual({ future_option: [1, 2] });
  });

  it("leaves empty options out and converts numbers", () => {
    const test = { ...newTestDraft("throughput", []), options: { duration_s: " 30 ", omit_s: "", udp: true } };
    expect(meshPayload({ ...newMeshDraft(), name: "x", tests: [test] }).tests?.[0]?.spec).toEqual({
      duration_s: 30,
      udp: true,
    });
  });

  it("sends what the kind allows and keeps the rest in the form", () => {
    const draft = {
      ...newMeshDraft(),
      name: "m",
      all_agents: true,
      members: [{ agent: "dca", side: "b" as const }],
      targets: "example.net\n192.0.2.1",
    };
    expect(meshPayload(draft)).toMatchObject({ all_agents: true, members: [], targets: [] });
    expect(meshPayload({ ...draft, all_agents: false })).toMatchObject({ members: [{ agent: "dca", side: "a" }] });
    expect(meshPayload({ ...draft, kind: "disjoint" })).toMatchObject({
      all_agents: false,
      members: [{ agent: "dca", side: "b" }],
    });
    expect(meshPayload({ ...draft, kind: "list" }).targets).toEqual(["example.net", "192.0.2.1"]);
  });

  it("parses targets separated by lines, commas or spaces", () => {
    expect(parseTargets(" a.example, b.example\n\n192.0.2.1 ")).toEqual(["a.example", "b.example", "192.0.2.1"]);
  });

  it("adds, removes and moves members", () => {
    const members = withMember([], "dca", true);
    expect(members).toEqual([{ agent: "dca", side: "a" }]);
    expect(withSide(members, "dca", "b")).toEqual([{ agent: "dca", side: "b" }]);
    expect(withMember(members, "dca", false)).toEqual([]);
  });

  it("names new tests uniquely and renames on a type change", () => {
    expect(uniqueName("ping", ["ping", "ping-2"])).toBe("ping-3");
    const ping = newTestDraft("ping", ["ping"]);
    expect(ping).toMatchObject({ name: "ping-2", interval_s: "300", slip_s: "0", options: {} });
    const changed = withTestType({ ...ping, options: { count: "5" } }, "throughput", ["ping"]);
    expect(changed).toMatchObject({ name: "throughput", test_type: "throughput", options: {}, slip_s: "21600" });
    const named = withTestType({ ...ping, name: "latency" }, "trace", []);
    expect(named.name).toBe("latency");
  });
});

describe("checks before the server", () => {
  it("waits for a complete form before asking for required fields", () => {
    const draft = newMeshDraft();
    expect(draftErrors(draft, false)).toEqual({});
    expect(draftErrors(draft, true)).toEqual({ name: "a name is required" });
  });

  it("marks bad names, schedules and options by the server's paths", () => {
    const draft = draftFromMesh(MESH);
    const [throughput, ping] = draft.tests;
    if (throughput === undefined || ping === undefined) {
      throw new Error("tests missing");
    }
    const broken = {
      ...draft,
      name: "back bone",
      tests: [
        { ...throughput, slip_s: "30000", options: { ...throughput.options, duration_s: "900" } },
        { ...ping, name: "throughput", interval_s: "" },
      ],
    };
    expect(draftErrors(broken, true)).toEqual({
      name: "letters, digits, - and _ only",
      "tests.0.name": "another test has this name",
      "tests.0.slip_s": "must not exceed the interval",
      "tests.0.spec.duration_s": "must be at most 300",
      "tests.1.name": "another test has this name",
      "tests.1.interval_s": "required",
    });
  });
});

describe("the server's errors", () => {
  it("tells the fields the form shows from the rest", () => {
    const draft = draftFromMesh(MESH);
    expect(isPlacedError("name", draft)).toBe(true);
    expect(isPlacedError("tests", draft)).toBe(true);
    expect(isPlacedError("tests.0.spec.duration_s", draft)).toBe(true);
    expect(isPlacedError("tests.0.spec.future_option", draft)).toBe(true);
    expect(isPlacedError("tests.0.spec.nonsense", draft)).toBe(false);
    expect(isPlacedError("tests.5.interval_s", draft)).toBe(false);
    expect(isPlacedError("members.1.agent", draft)).toBe(true);
    expect(isPlacedError("targets.0", draft)).toBe(false);
    expect(isPlacedError("", draft)).toBe(false);
    expect(isPlacedError("surprise", draft)).toBe(false);
  });

  it("names members and tests as a person reads them", () => {
    const draft = draftFromMesh(MESH);
    const errors = { "members.1.agent": "gone" };
    expect(memberErrors(errors, draft)).toEqual({ dcb: "gone" });
    expect(describePath("tests.1.spec.count", draft)).toBe("test 2 (ping) › count");
    expect(describePath("members.0.agent", draft)).toBe("member dca › agent");
    expect(targetErrors({ targets: "needs one", "targets.1": "bad" }, ["a", "b!"])).toBe("needs one b!: bad");
    expect(targetErrors({}, [])).toBeUndefined();
  });
});

describe("words and small rules", () => {
  it("formats intervals", () => {
    expect(formatInterval(14_400)).toBe("4 h");
    expect(formatInterval(5400)).toBe("1 h 30 min");
    expect(formatInterval(90)).toBe("1 min 30 s");
    expect(formatInterval(86_400 + 3600)).toBe("1 d 1 h");
    expect(formatInterval(0)).toBe("0 s");
    expect(secondsHint("21600")).toBe("= 6 h");
    expect(secondsHint("30")).toBe("");
    expect(secondsHint("abc")).toBe("");
  });

  it("offers only active agents as members", () => {
    const agent = { status: { value: "online" }, revoked_at: null, decommissioned_at: null };
    expect(isSelectableAgent(agent)).toBe(true);
    expect(isSelectableAgent({ ...agent, revoked_at: "2026-01-01T00:00:00Z" })).toBe(false);
    expect(isSelectableAgent({ ...agent, decommissioned_at: "2026-01-01T00:00:00Z" })).toBe(false);
    expect(isSelectableAgent({ ...agent, status: { value: "decommissioned" } })).toBe(false);
  });

  it("reads an audit entry's diff", () => {
    expect(entryChanges({ enabled: [true, false], broken: "x" })).toEqual({ enabled: [true, false] });
    expect(entryChanges(null)).toEqual({});
  });
});
