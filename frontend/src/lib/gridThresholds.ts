// The grid's thresholds form: each stored threshold in the unit an operator thinks in (%,
// Mbit/s, ms, minutes), and back. A blank field is unset: the server's default applies.
import type { StoredThresholds } from "./grid";

export type ThresholdKey = keyof StoredThresholds;

export interface ThresholdField {
  key: ThresholdKey;
  label: string;
  unit: string;
  /** display value = stored value x scale */
  scale: number;
  integer?: boolean;
}

export const THRESHOLD_FIELDS: readonly ThresholdField[] = [
  { key: "fraction_good", label: "Throughput / ceiling: good from", unit: "%", scale: 100 },
  { key: "fraction_bad", label: "Throughput / ceiling: bad at or under", unit: "%", scale: 100 },
  { key: "rate_good_bps", label: "Throughput: good from", unit: "Mbit/s", scale: 1e-6 },
  { key: "rate_bad_bps", label: "Throughput: bad at or under", unit: "Mbit/s", scale: 1e-6 },
  { key: "rtt_warn_ms", label: "RTT median: warn from", unit: "ms", scale: 1 },
  { key: "rtt_crit_ms", label: "RTT median: critical from", unit: "ms", scale: 1 },
  { key: "loss_warn", label: "Loss (also one-way): warn from", unit: "%", scale: 100 },
  { key: "loss_crit", label: "Loss (also one-way): critical from", unit: "%", scale: 100 },
  { key: "stale_after_s", label: "Stale after", unit: "min", scale: 1 / 60, integer: true },
];

export type ThresholdForm = Record<ThresholdKey, string>;

/** Drops the float noise of the unit change (0.07 x 100 = 7.000000000000001). */
function tidy(value: number): number {
  return Number(value.toPrecision(12));
}

/** `value` (stored units) as the form shows it. */
export function displayValue(field: ThresholdField, value: number): string {
  return String(tidy(value * field.scale));
}

/** The form's fields from what the mesh stores; unset thresholds are blank. */
export function formFromStored(stored: StoredThresholds | undefined): ThresholdForm {
  const form = {} as ThresholdForm;
  for (const field of THRESHOLD_FIELDS) {
    const value = stored?.[field.key];
    form[field.key] = value === undefined ? "" : displayValue(field, value);
  }
  return form;
}

/** What to store from the form: blank fields left out (their defaults apply), or the fields
 * that are not numbers. Ranges and order are the server's to check. */
export function storedFromForm(form: ThresholdForm): { thresholds: StoredThresholds; errors: Record<string, string> } {
  const thresholds: StoredThresholds = {};
  const errors: Record<string, string> = {};
  for (const field of THRESHOLD_FIELDS) {
    const text = form[field.key].trim();
    if (text === "") {
      continue;
    }
    const number = Number(text);
    if (!Number.isFinite(number)) {
      errors[field.key] = "a number, or blank for the default";
      continue;
    }
    const stored = tidy(number / field.scale);
    thresholds[field.key] = field.integer === true ? Math.round(stored) : stored;
  }
  return { thresholds, errors };
}
