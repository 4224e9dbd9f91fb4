// The mesh editor's form state, apart from React: a mesh as the form holds it (strings as
// typed) and back to the JSON the API takes. The option fields are meshOptions.ts's, the
// checks and the server's errors meshErrors.ts's.
import type { Schemas } from "../api/client";
import { type OptionDraft, asRecord, optionFieldsOf, optionValue } from "./meshOptions";

export type Mesh = Schemas["Mesh"];
export type MeshPayload = Schemas["MeshRequest"];
export type MeshKind = Schemas["MeshKindEnum"];
export type MemberSide = Schemas["SideEnum"];
export type TestType = Schemas["TestTypeEnum"];

export const MESH_KINDS: readonly { value: MeshKind; label: string; help: string }[] = [
  { value: "mesh", label: "Mesh", help: "every member tests to every other member" },
  { value: "disjoint", label: "Disjoint", help: "every member of side A tests to every member of side B" },
  { value: "list", label: "List", help: "every member tests to each external target (no agent at the far end)" },
];

export interface TestDraft {
  /** Stable across edits and renames, for React. */
  key: string;
  name: string;
  test_type: string;
  interval_s: string;
  slip_s: string;
  enabled: boolean;
  /** The options the spec writes; one left out runs with its default. */
  options: Record<string, OptionDraft>;
  /** Options of the spec this UI has no field for, kept as written. */
  extra: Record<string, unknown>;
}

export interface MemberDraft {
  agent: string;
  side: MemberSide;
}

export interface MeshDraft {
  name: string;
  description: string;
  kind: MeshKind;
  all_agents: boolean;
  unidirectional: boolean;
  /** External targets of a list mesh, one per line. */
  targets: string;
  enabled: boolean;
  members: MemberDraft[];
  tests: TestDraft[];
}

let lastKey = 0;

function nextKey(): string {
  lastKey += 1;
  return `test-${lastKey}`;
}

function specDraft(testType: string, spec: unknown): Pick<TestDraft, "options" | "extra"> {
  const fields = new Map(optionFieldsOf(testType).map((field) => [field.name, field]));
  const options: Record<string, OptionDraft> = {};
  const extra: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(asRecord(spec))) {
    const field = fields.get(name);
    if (field === undefined) {
      extra[name] = value;
    } else if (field.input === "boolean" && typeof value === "boolean") {
      options[name] = value;
    } else if (value !== null && (typeof value === "string" || typeof value === "number")) {
      options[name] = String(value);
    } else if (value !== null) {
      extra[name] = value;
    }
  }
  return { options, extra };
}

export function draftFromMesh(mesh: Mesh): MeshDraft {
  return {
    name: mesh.name,
    description: mesh.description ?? "",
    kind: mesh.kind,
    all_agents: mesh.all_agents === true,
    unidirectional: mesh.unidirectional === true,
    targets: (mesh.targets ?? []).join("\n"),
    enabled: mesh.enabled !== false,
    members: (mesh.members ?? []).map((member) => ({ agent: member.agent, side: member.side })),
    tests: (mesh.tests ?? []).map((test) => ({
      key: nextKey(),
      name: test.name,
      test_type: test.test_type,
      interval_s: String(test.interval_s),
      slip_s: String(test.slip_s),
      enabled: test.enabled !== false,
      ...specDraft(test.test_type, test.spec),
    })),
  };
}

/**
 * Where a new test starts: the intervals of the server's default mesh (perfSONAR's regular
 * tests), throughput with a slip of its whole interval so the planner can place it.
 */
const STARTING_SCHEDULE: Readonly<Record<string, readonly [number, number]>> = {
  throughput: [6 * 3600, 6 * 3600],
  ping: [300, 0],
  flowsweep: [900, 0],
  trace: [1800, 0],
};

/** base, base-2, base-3…: the first not taken. */
export function uniqueName(base: string, taken: readonly string[]): string {
  if (!taken.includes(base)) {
    return base;
  }
  let index = 2;
  while (taken.includes(`${base}-${index}`)) {
    index += 1;
  }
  return `${base}-${index}`;
}

export function newTestDraft(testType: string, takenNames: readonly string[]): TestDraft {
  const [interval, slip] = STARTING_SCHEDULE[testType] ?? [300, 0];
  return {
    key: nextKey(),
    name: uniqueName(testType, takenNames),
    test_type: testType,
    interval_s: String(interval),
    slip_s: String(slip),
    enabled: true,
    options: {},
    extra: {},
  };
}

/** A new mesh: every member to every other, a ping every 5 minutes. */
export function newMeshDraft(): MeshDraft {
  return {
    name: "",
    description: "",
    kind: "mesh",
    all_agents: false,
    unidirectional: false,
    targets: "",
    enabled: true,
    members: [],
    tests: [newTestDraft("ping", [])],
  };
}

/**
 * Another kind of test: the options reset (they belong to the old kind), and a name that
 * was the old kind's becomes the new one's.
 */
export function withTestType(test: TestDraft, testType: string, otherNames: readonly string[]): TestDraft {
  const wasDefaultName = test.name === test.test_type || test.name.startsWith(`${test.test_type}-`);
  const [interval, slip] = STARTING_SCHEDULE[testType] ?? [Number(test.interval_s), Number(test.slip_s)];
  return {
    ...test,
    test_type: testType,
    name: wasDefaultName ? uniqueName(testType, otherNames) : test.name,
    interval_s: String(interval),
    slip_s: String(slip),
    options: {},
    extra: {},
  };
}

/** Adds or removes a member; a new member of a disjoint mesh joins side A unless told. */
export function withMember(members: readonly MemberDraft[], agent: string, on: boolean, side: MemberSide = "a") {
  const rest = members.filter((member) => member.agent !== agent);
  return on ? [...rest, { agent, side }] : rest;
}

export function withSide(members: readonly MemberDraft[], agent: string, side: MemberSide): MemberDraft[] {
  return members.map((member) => (member.agent === agent ? { ...member, side } : member));
}

/** Targets as typed: one per line, or separated by commas or spaces. */
export function parseTargets(text: string): string[] {
  return text
    .split(/[\s,]+/u)
    .map((target) => target.trim())
    .filter((target) => target !== "");
}

export function wholeNumber(text: string, fallback: number): number {
  const trimmed = text.trim();
  return trimmed === "" ? fallback : Number(trimmed);
}

function testPayload(test: TestDraft): Schemas["MeshTestRequest"] {
  const fields = new Map(optionFieldsOf(test.test_type).map((field) => [field.name, field]));
  const spec: Record<string, unknown> = { ...test.extra };
  for (const [name, value] of Object.entries(test.options)) {
    if (typeof value === "string" && value.trim() === "") {
      continue;
    }
    spec[name] = optionValue(fields.get(name), value);
  }
  return {
    name: test.name.trim(),
    test_type: test.test_type as TestType,
    spec,
    interval_s: wholeNumber(test.interval_s, Number.NaN),
    slip_s: wholeNumber(test.slip_s, 0),
    enabled: test.enabled,
  };
}

/** Whether the members list applies: a mesh of all agents names none. */
export function listsMembers(draft: Pick<MeshDraft, "kind" | "all_agents">): boolean {
  return draft.kind === "disjoint" || !draft.all_agents;
}

/**
 * The mesh as the API takes it. Fields the kind does not use are sent as the server wants
 * them (no members with all_agents, no targets outside a list mesh) while the form keeps
 * them, so switching back restores what was typed.
 */
export function meshPayload(draft: MeshDraft): MeshPayload {
  const members = listsMembers(draft) ? draft.members : [];
  return {
    name: draft.name.trim(),
    description: draft.description,
    kind: draft.kind,
    all_agents: draft.kind !== "disjoint" && draft.all_agents,
    unidirectional: draft.unidirectional,
    targets: draft.kind === "list" ? parseTargets(draft.targets) : [],
    enabled: draft.enabled,
    members: members.map((member) => ({
      agent: member.agent,
      side: draft.kind === "disjoint" ? member.side : "a",
    })),
    tests: draft.tests.map(testPayload),
  };
}

