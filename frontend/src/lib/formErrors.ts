// A failed save, split for a form: each field's complaint beside the field, the rest above it.
import { ApiError } from "../api/client";

export interface FormErrors {
  /** Messages for the form's own fields, by field name. */
  fields: Record<string, string>;
  /** Everything else (non-field errors, fields the form lacks, other failures); null when none. */
  general: string | null;
}

const NONE: FormErrors = { fields: {}, general: null };

export function splitErrors(error: Error | null, formFields: readonly string[]): FormErrors {
  if (error === null) {
    return NONE;
  }
  if (!(error instanceof ApiError)) {
    return { fields: {}, general: "unexpected error" };
  }
  const byField = error.fieldErrors;
  const fields: Record<string, string> = {};
  const other: string[] = [];
  for (const [field, message] of Object.entries(byField)) {
    if (formFields.includes(field)) {
      fields[field] = message;
    } else {
      other.push(field === "" ? message : `${field}: ${message}`);
    }
  }
  if (other.length > 0) {
    return { fields, general: other.join("; ") };
  }
  return { fields, general: Object.keys(fields).length > 0 ? null : error.message };
}
