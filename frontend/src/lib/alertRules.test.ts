import { describe, expect, it } from "vitest";

import type { AlertRule } from "../api/alertQueries";
import { choices } from "../test/render";
import { conditionText, ruleLabel } from "./alertRules";

const CHOICES = choices({
  alert_metric: [{ value: "throughput_fraction", label: "Throughput as a fraction of its ceiling", color: "#57606a" }],
  alert_comparison: [{ value: "le", label: "<=", color: "#57606a" }],
  alert_rule_kind: [{ value: "no_data", label: "No data", color: "#57606a" }],
  finding_metric: [{ value: "rtt", label: "RTT", color: "#57606a" }],
});

function rule(fields: Partial<AlertRule>): AlertRule {
  return { id: 1, name: "r", kind: "threshold", k: 2, n: 3, ...fields } as AlertRule;
}

describe("conditionText", () => {
  it("says a threshold rule with the server's labels", () => {
    const text = conditionText(rule({ metric: "throughput_fraction", comparison: "le", value: 0.5 }), CHOICES);
    expect(text).toBe("Throughput as a fraction of its ceiling <= 0.5 in 2 of 3 runs");
  });

  it("falls back to the bare values before the choices load", () => {
    expect(conditionText(rule({ metric: "loss", comparison: "gt", value: 0.01 }), undefined)).toBe("loss gt 0.01 in 2 of 3 runs");
  });

  it("words the other kinds", () => {
    expect(conditionText(rule({ kind: "no_data" }), CHOICES)).toBe("2 of 3 runs failed, or 3 intervals late");
    expect(conditionText(rule({ kind: "agent_down" }), CHOICES)).toBe("no contact for 3 polls");
    expect(conditionText(rule({ kind: "finding", metric: "rtt" }), CHOICES)).toBe("a finding of RTT");
    expect(conditionText(rule({ kind: "finding", metric: "" }), CHOICES)).toBe("any finding");
  });
});

describe("ruleLabel", () => {
  it("labels a kind, and says nothing of no value", () => {
    expect(ruleLabel(CHOICES, "alert_rule_kind", "no_data")).toBe("No data");
    expect(ruleLabel(CHOICES, "alert_rule_kind", "threshold")).toBe("threshold");
    expect(ruleLabel(CHOICES, "alert_comparison", undefined)).toBe("");
  });
});
