// The mesh form's checks before asking the server, and the server's nested 400 errors mapped
// onto the fields they concern.
import { isTestKind } from "./testKinds";
import { type MeshDraft, listsMembers, wholeNumber } from "./meshEditor";
import { asRecord, checkOption, optionFieldsOf } from "./meshOptions";

/** Messages by field path, as the server's errors are flattened: "tests.0.spec.duration_s". */
export type FieldErrors = Record<string, string>;

// Mesh and test names are slugs (Django SlugField): what URLs and plan ids are built from.
// The server's rule (backend/meshes/names.py), as its OpenAPI schema states it: a test holds
// these to backend/openapi.yaml.
export const NAME_PATTERN = "^[-a-zA-Z0-9_]+$";
export const NAME_MAX = 63;
const SLUG = new RegExp(NAME_PATTERN, "u");

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
