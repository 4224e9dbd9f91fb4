// A rule's condition in words, with the labels the server registers for its kind, metric and
// comparison (GET /choices/), so the page never says what the server does not.
import type { AlertRule } from "../api/alertQueries";
import type { Choices } from "../api/queries";
import { choiceFor } from "./schedule";

type LabelledSet = "alert_rule_kind" | "alert_metric" | "alert_comparison" | "finding_metric";

/** The server's label of a value, or the value itself until the choices have loaded. */
export function ruleLabel(choices: Choices | undefined, set: LabelledSet, value: string | null | undefined): string {
  if (value === null || value === undefined || value === "") {
    return "";
  }
  return choiceFor(choices?.[set], value)?.label ?? value;
}

export function conditionText(rule: AlertRule, choices: Choices | undefined): string {
  const runs = `${String(rule.k)} of ${String(rule.n)} runs`;
  switch (rule.kind) {
    case "threshold":
      return `${ruleLabel(choices, "alert_metric", rule.metric)} ${ruleLabel(choices, "alert_comparison", rule.comparison)} ${String(rule.value)} in ${runs}`;
    case "no_data":
      return `${runs} failed, or 3 intervals late`;
    case "agent_down":
      return "no contact for 3 polls";
    default:
      return rule.metric !== undefined && rule.metric !== ""
        ? `a finding of ${ruleLabel(choices, "finding_metric", rule.metric)}`
        : "any finding";
  }
}
