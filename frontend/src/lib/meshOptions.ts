// The option fields each test kind's contract schema yields, and the checks that mirror that
// schema. The server stays the judge: these checks only answer sooner.
import { testKindValues, testOptionsSchemas } from "../api/contract";

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

export function asRecord(value: unknown): Record<string, unknown> {
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

export function optionValue(field: OptionField | undefined, value: OptionDraft): unknown {
  if (typeof value === "boolean" || field === undefined) {
    return value;
  }
  const text = value.trim();
  return field.input === "integer" || field.input === "number" ? Number(text) : text;
}

/** An option as the form holds it: text as typed ("" = left out), or a checkbox. */
export type OptionDraft = string | boolean;
