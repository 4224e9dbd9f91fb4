// Reading an audit entry's diff: {"dotted.field": [old, new]} as rows a person can scan.

/** One changed field, with what kind of change it was. */
export interface ChangeRow {
  field: string;
  before: unknown;
  after: unknown;
  kind: "added" | "removed" | "changed";
}

export type Changes = Record<string, readonly [unknown, unknown]>;

const ABSENT = "–";

function absent(value: unknown): boolean {
  return value === null || value === undefined;
}

/**
 * A value as it reads in a diff: strings bare (an empty one as ""), numbers and booleans
 * as written, lists and objects as compact JSON; `maxLength` cuts long ones with an ellipsis.
 */
export function formatChangeValue(value: unknown, maxLength = Infinity): string {
  let text: string;
  if (absent(value)) {
    text = ABSENT;
  } else if (typeof value === "string") {
    text = value === "" ? '""' : value;
  } else if (typeof value === "number" || typeof value === "boolean") {
    text = String(value);
  } else {
    try {
      text = JSON.stringify(value);
    } catch {
      text = String(value);
    }
  }
  return text.length > maxLength ? `${text.slice(0, Math.max(1, maxLength - 1))}…` : text;
}

/** The changes in field order (so "tests.0.name" sits beside "tests.0.spec"), each classified. */
export function changeRows(changes: Changes): ChangeRow[] {
  return Object.entries(changes)
    .map(([field, [before, after]]) => ({
      field,
      before,
      after,
      kind: absent(before) ? ("added" as const) : absent(after) ? ("removed" as const) : ("changed" as const),
    }))
    .sort((a, b) => a.field.localeCompare(b.field, undefined, { numeric: true }));
}

/** One line for a table cell: "enabled: true → false; name: a → b; +3 more". */
export function changeSummary(changes: Changes, maxFields = 3, maxValueLength = 40): string {
  const rows = changeRows(changes);
  if (rows.length === 0) {
    return "";
  }
  const shown = rows.slice(0, maxFields).map((row) => {
    const before = formatChangeValue(row.before, maxValueLength);
    const after = formatChangeValue(row.after, maxValueLength);
    return `${row.field}: ${before} → ${after}`;
  });
  const more = rows.length - shown.length;
  return more > 0 ? `${shown.join("; ")}; +${String(more)} more` : shown.join("; ");
}

/** An entry's `changes` (free JSON in the schema) narrowed to pairs; anything else is dropped. */
export function asChanges(value: unknown): Changes {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return {};
  }
  const changes: Record<string, readonly [unknown, unknown]> = {};
  for (const [field, pair] of Object.entries(value as Record<string, unknown>)) {
    if (Array.isArray(pair) && pair.length === 2) {
      changes[field] = [pair[0], pair[1]];
    }
  }
  return changes;
}
