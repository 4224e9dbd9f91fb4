// The mesh editor's logic, apart from React: a mesh as the form holds it (strings as typed)
// and back to the JSON the API takes, the option fields each test kind's contract schema
// yields, the checks that mirror that schema, and the server's nested 400 errors mapped onto
// the fields they concern. The server stays the judge: these checks only answer sooner.
import type { Schemas } from "../api/client";
import { testKindValues, testOptionsSchemas } from "../api/contract";
import { isTestKind } from "./testKinds";

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

// --- option fields from the contract -------------------------------------------------------

export type OptionInput = "integer" | "number" | "boolean" | "enum" | "string";

/** One input of a test's options form, read off the kind's JSON Schema property. */
export interface OptionField {
  name: string;
  input: OptionInput;
  description: string;
  /** The value an option left out runs with; null where the default is "none" (ttl). */
  default: string | number | boolean | null;
  minimum: number | null;
  maximum: number | null;
  /** 0 is allowed besides minimum..maximum, meaning "the default" (mss, port). */
  zeroAllowed: boolean;
  /** The allowed values of an enum option. */
  values: readonly string[];
  pattern: string | null;
  /** The sentence shown when a string does not match its pattern. */
  patternMessage: string | null;
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function numberOrNull(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

function stringOrNull(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

function baseType(type: unknown): string {
  if (Array.isArray(type)) {
    const named = type.filter((item): item is string => typeof item === "string" && item !== "null");
    return named[0] ?? "string";
  }
  return typeof type === "string" ? type : "string";
}

function inputOf(property: Record<string, unknown>): OptionInput {
  if (Array.isArray(property.enum)) {
    return "enum";
  }
  const type = baseType(property.type);
  return type === "integer" || type === "number" || type === "boolean" ? type : "string";
}

function defaultOf(value: unknown): OptionField["default"] {
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? value : null;
}

/**
 * The fields a mesh may set, in the schema's order; readOnly options (set by the server or
 * the agent) are left out, as the server refuses them in a mesh.
 */
export function optionFields(schema: unknown): OptionField[] {
  const fields: OptionField[] = [];
  for (const [name, raw] of Object.entries(asRecord(asRecord(schema).properties))) {
    const property = asRecord(raw);
    if (property.readOnly === true) {
      continue;
    }
    let minimum = numberOrNull(property.minimum);
    let maximum = numberOrNull(property.maximum);
    let zeroAllowed = false;
    // "0 or a value in range" is written anyOf [{const: 0}, {minimum, maximum}].
    for (const branch of Array.isArray(property.anyOf) ? property.anyOf.map(asRecord) : []) {
      if (branch.const === 0) {
        zeroAllowed = true;
      }
      minimum = numberOrNull(branch.minimum) ?? minimum;
      maximum = numberOrNull(branch.maximum) ?? maximum;
    }
    fields.push({
      name,
      input: inputOf(property),
      description: stringOrNull(property.description) ?? "",
      default: defaultOf(property.default),
      minimum,
      maximum,
      zeroAllowed,
      values: Array.isArray(property.enum) ? property.enum.map(String) : [],
      pattern: stringOrNull(property.pattern),
      patternMessage: stringOrNull(property.errorMessage),
    });
  }
  return fields;
}

const FIELDS_BY_KIND = new Map<string, OptionField[]>(
  testKindValues.map((kind) => [kind, optionFields(testOptionsSchemas[kind])]),
);

/** The options form of a test type; none for a type this UI's contract does not know. */
export function optionFieldsOf(testType: string): readonly OptionField[] {
  return FIELDS_BY_KIND.get(testType) ?? [];
}

/** What an empty input means: the option's default. */
export function defaultPlaceholder(field: OptionField): string {
  if (field.default === null || field.default === "") {
    return "default";
  }
  return String(field.default);
}

/** The bounds in words for a hint beside the input: "1–300", "0 or 88–65495", "≥ 0". */
export function boundsHint(field: OptionField): string {
  const { minimum, maximum } = field;
  let range = "";
  if (minimum !== null && maximum !== null) {
    range = `${minimum}–${maximum}`;
  } else if (minimum !== null) {
    range = `≥ ${minimum}`;
  } else if (maximum !== null) {
    range = `≤ ${maximum}`;
  }
  return field.zeroAllowed && range !== "" ? `0 or ${range}` : range;
}

/** What is wrong with a typed option value, as the schema has it; null when nothing. "" is the default. */
export function checkOption(field: OptionField, value: OptionDraft): string | null {
  if (field.input === "boolean") {
    return typeof value === "boolean" ? null : "must be yes or no";
  }
  const text = typeof value === "string" ? value.trim() : String(value);
  if (text === "") {
    return null;
  }
  if (field.input === "enum") {
    return field.values.includes(text) ? null : `must be one of ${field.values.join(", ")}`;
  }
  if (field.input === "string") {
    if (field.pattern !== null && !new RegExp(field.pattern, "u").test(text)) {
      return field.patternMessage ?? `must match ${field.pattern}`;
    }
    return null;
  }
  const number = Number(text);
  if (!Number.isFinite(number)) {
    return "must be a number";
  }
  if (field.input === "integer" && !Number.isInteger(number)) {
    return "must be a whole number";
  }
  if (field.zeroAllowed && number === 0) {
    return null;
  }
  const outside =
    (field.minimum !== null && number < field.minimum) || (field.maximum !== null && number > field.maximum);
  if (!outside) {
    return null;
  }
  if (field.zeroAllowed) {
    return `must be 0 or from ${field.minimum ?? "–"} to ${field.maximum ?? "–"}`;
  }
  return field.minimum !== null && number < field.minimum
    ? `must be at least ${field.minimum}`
    : `must be at most ${field.maximum ?? "–"}`;
}

function optionValue(field: OptionField | undefined, value: OptionDraft): unknown {
  if (typeof value === "boolean" || field === undefined) {
    return value;
  }
  const text = value.trim();
  return field.input === "integer" || field.input === "number" ? Number(text) : text;
}

// --- the form's state ---------------------------------------------------------------------

/** An option as the form holds it: text as typed ("" = left out), or a checkbox. */
export type OptionDraft = string | boolean;

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

function wholeNumber(text: string, fallback: number): number {
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

// --- checks before asking the server ------------------------------------------------------

/** Messages by field path, as the server's errors are flattened: "tests.0.spec.duration_s". */
export type FieldErrors = Record<string, string>;

// Mesh and test names are slugs (Django SlugField): what URLs and plan ids are built from.
const SLUG = /^[-a-zA-Z0-9_]+$/u;
const NAME_MAX = 63;

function checkName(name: string, complete: boolean): string | null {
  const trimmed = name.trim();
  if (trimmed === "") {
    return complete ? "a name is required" : null;
  }
  if (!SLUG.test(trimmed)) {
    return "letters, digits, - and _ only";
  }
  return trimmed.length > NAME_MAX ? `at most ${NAME_MAX} characters` : null;
}

function checkSeconds(text: string, required: boolean, complete: boolean): string | null {
  const trimmed = text.trim();
  if (trimmed === "") {
    return required && complete ? "required" : null;
  }
  const seconds = Number(trimmed);
  return Number.isInteger(seconds) && seconds >= 0 ? null : "whole seconds, 0 or more";
}

/**
 * What the form can tell before asking the server, by the server's field paths. Without
 * `complete`, a field still empty is not yet a mistake (the user is typing).
 */
export function draftErrors(draft: MeshDraft, complete: boolean): FieldErrors {
  const errors: FieldErrors = {};
  const put = (path: string, message: string | null) => {
    if (message !== null) {
      errors[path] = message;
    }
  };
  put("name", checkName(draft.name, complete));
  if (complete && draft.tests.length === 0) {
    put("tests", "add at least one test");
  }
  draft.tests.forEach((test, index) => {
    const path = `tests.${index}`;
    const others = draft.tests.filter((_, other) => other !== index).map((other) => other.name.trim());
    const nameError = checkName(test.name, complete);
    put(`${path}.name`, nameError ?? (others.includes(test.name.trim()) ? "another test has this name" : null));
    if (!isTestKind(test.test_type)) {
      put(`${path}.test_type`, `this UI does not know the test type ${test.test_type}`);
    }
    const intervalError = checkSeconds(test.interval_s, true, complete);
    put(`${path}.interval_s`, intervalError ?? (Number(test.interval_s) === 0 ? "must be more than 0" : null));
    const slipError = checkSeconds(test.slip_s, false, complete);
    const slip = wholeNumber(test.slip_s, 0);
    const interval = Number(test.interval_s);
    put(
      `${path}.slip_s`,
      slipError ?? (intervalError === null && slip > interval ? "must not exceed the interval" : null),
    );
    for (const field of optionFieldsOf(test.test_type)) {
      const value = test.options[field.name];
      if (value !== undefined) {
        put(`${path}.spec.${field.name}`, checkOption(field, value));
      }
    }
  });
  return errors;
}

// --- the server's errors (flattened by api/client's flattenErrors) -------------------------

/** The message for exactly this path. */
export function errorAt(errors: FieldErrors, path: string): string | undefined {
  return errors[path];
}

/** Messages below a path, with the rest of their path: targets.2 -> ["2", "…"]. */
export function errorsBelow(errors: FieldErrors, path: string): [string, string][] {
  const prefix = `${path}.`;
  return Object.entries(errors)
    .filter(([key]) => key.startsWith(prefix))
    .map(([key, message]): [string, string] => [key.slice(prefix.length), message]);
}

/** The targets' messages in one line, each item's led by the target it is about. */
export function targetErrors(errors: FieldErrors, targets: readonly string[]): string | undefined {
  const messages = errorsBelow(errors, "targets").map(
    ([index, message]) => `${targets[Number(index)] ?? `target ${Number(index) + 1}`}: ${message}`,
  );
  const own = errors.targets;
  const all = own === undefined ? messages : [own, ...messages];
  return all.length === 0 ? undefined : all.join(" ");
}

const TOP_FIELDS = new Set([
  "name",
  "description",
  "kind",
  "all_agents",
  "unidirectional",
  "targets",
  "enabled",
  "members",
  "tests",
]);
const TEST_FIELDS = new Set(["name", "test_type", "interval_s", "slip_s", "enabled", "spec"]);

/** Whether the form shows this path's message beside a field (else the summary lists it). */
export function isPlacedError(path: string, draft: MeshDraft): boolean {
  const parts = path.split(".");
  const [top, indexText, field, option] = parts;
  if (top === undefined || !TOP_FIELDS.has(top)) {
    return false;
  }
  if (parts.length === 1) {
    return true;
  }
  const index = Number(indexText);
  if (top === "targets") {
    return draft.kind === "list" && parts.length === 2;
  }
  if (top === "members") {
    return listsMembers(draft) && index < draft.members.length && (field === undefined || parts.length === 3);
  }
  if (top === "tests") {
    const test = draft.tests[index];
    if (test === undefined || parts.length > 4) {
      return false;
    }
    if (field === undefined) {
      return true;
    }
    if (!TEST_FIELDS.has(field)) {
      return false;
    }
    if (option === undefined) {
      return true;
    }
    return field === "spec" && (optionFieldsOf(test.test_type).some((f) => f.name === option) || option in test.extra);
  }
  return false;
}

/** Messages about members by agent name: the server reports them by position in the list sent. */
export function memberErrors(errors: FieldErrors, draft: MeshDraft): Record<string, string> {
  const byAgent: Record<string, string> = {};
  if (!listsMembers(draft)) {
    return byAgent;
  }
  for (const [rest, message] of errorsBelow(errors, "members")) {
    const member = draft.members[Number(rest.split(".")[0])];
    if (member !== undefined) {
      byAgent[member.agent] = byAgent[member.agent] === undefined ? message : `${byAgent[member.agent] ?? ""} ${message}`;
    }
  }
  return byAgent;
}

/** A path as a person reads it: "tests.1.spec.duration_s" -> "test 2 (tput) › duration_s". */
export function describePath(path: string, draft: MeshDraft): string {
  if (path === "") {
    return "mesh";
  }
  const parts = path.split(".");
  if (parts[0] === "tests" && parts[1] !== undefined) {
    const index = Number(parts[1]);
    const test = draft.tests[index];
    const head = test === undefined ? `test ${index + 1}` : `test ${index + 1} (${test.name || test.test_type})`;
    return [head, ...parts.slice(2).filter((part) => part !== "spec")].join(" › ");
  }
  if (parts[0] === "members" && parts[1] !== undefined) {
    const member = draft.members[Number(parts[1])];
    return [`member ${member?.agent ?? Number(parts[1]) + 1}`, ...parts.slice(2)].join(" › ");
  }
  return parts.join(" › ");
}

// --- words ------------------------------------------------------------------------------------

const UNITS: readonly [number, string][] = [
  [86_400, "d"],
  [3600, "h"],
  [60, "min"],
  [1, "s"],
];

/** Seconds as a person reads an interval: 14400 -> "4 h", 5400 -> "1 h 30 min", 90 -> "1 min 30 s". */
export function formatInterval(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) {
    return "";
  }
  if (seconds === 0) {
    return "0 s";
  }
  let rest = Math.round(seconds);
  const parts: string[] = [];
  for (const [size, unit] of UNITS) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)} ${unit}`);
      rest %= size;
    }
  }
  return parts.join(" ");
}

/** The hint beside a seconds input: "= 4 h", or "" while it holds no whole number. */
export function secondsHint(text: string): string {
  const trimmed = text.trim();
  const seconds = Number(trimmed);
  if (trimmed === "" || !Number.isInteger(seconds) || seconds < 60) {
    return "";
  }
  return `= ${formatInterval(seconds)}`;
}

/** Intervals a NOC picks most, offered as suggestions in the interval inputs. */
export const COMMON_INTERVALS_S: readonly number[] = [60, 300, 600, 900, 1800, 3600, 4 * 3600, 6 * 3600, 12 * 3600, 86_400];

/** The agents a mesh may take as members: not revoked, not decommissioned. */
export function isSelectableAgent(agent: {
  revoked_at?: string | null;
  decommissioned_at?: string | null;
  status: { value: string };
}): boolean {
  return (
    (agent.revoked_at ?? null) === null &&
    (agent.decommissioned_at ?? null) === null &&
    agent.status.value !== "decommissioned" &&
    agent.status.value !== "revoked"
  );
}

/** The audit entry's diff when it has the {"field": [old, new]} shape, else none. */
export function entryChanges(changes: unknown): Record<string, readonly [unknown, unknown]> {
  const result: Record<string, readonly [unknown, unknown]> = {};
  for (const [field, pair] of Object.entries(asRecord(changes))) {
    if (Array.isArray(pair) && pair.length === 2) {
      result[field] = [pair[0], pair[1]] as const;
    }
  }
  return result;
}
