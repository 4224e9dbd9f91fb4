import { describe, expect, it } from "vitest";

import type { IncidentAlert } from "../api/alertQueries";
import { alertWindow, CHANNEL_FORMS, channelConfig, matcherText, pathLink, silenceFor, type ChannelKind } from "./incidents";

function alert(labels: Record<string, unknown>): IncidentAlert {
  return {
    id: 1, rule: "RTT shift", severity: "warning", state: "firing", silenced: false, inhibited: false,
    summary: "RTT up 10 ms", labels, evidence: {}, advice: "", value: 10, started_at: "2026-11-24T10:00:00Z",
    firing_at: "2026-11-24T10:00:00Z", last_true_at: "2026-11-24T10:00:00Z", resolved_at: null, finding_id: 3,
  };
}

describe("silenceFor", () => {
  const now = new Date("2026-11-24T12:00:00Z");

  it("silences a path alert's path and metric for the hours asked", () => {
    const silence = silenceFor(alert({ path: "athens->frankfurt", metric: "rtt", agent: ["athens", "frankfurt"] }), 2, "works", now);
    expect(matcherText(silence.matchers)).toBe('path="athens->frankfurt", metric="rtt"');
    expect(silence.starts_at).toBe("2026-11-24T12:00:00.000Z");
    expect(silence.ends_at).toBe("2026-11-24T14:00:00.000Z");
    expect(silence.comment).toBe("works");
  });

  it("silences an agent-down alert's agent", () => {
    const silence = silenceFor(alert({ agent: ["frankfurt"], metric: "agent" }), 1, "reboot", now);
    expect(matcherText(silence.matchers)).toBe('agent="frankfurt"');
  });

  it("ignores labels of the wrong type", () => {
    expect(silenceFor(alert({ path: 3, agent: "x" }), 1, "", now).matchers).toEqual([]);
  });
});

describe("pathLink", () => {
  it("links a path alert to its path page and nothing else", () => {
    expect(pathLink(alert({ source_id: "a", destination_id: "b" }))).toBe("/paths/a/b");
    expect(pathLink(alert({ agent_id: "a" }))).toBeNull();
  });
});

describe("channelConfig", () => {
  it("splits email addresses on commas, semicolons and spaces", () => {
    expect(channelConfig("email", "a@x.org, b@x.org;c@x.org  d@x.org")).toEqual({
      to: ["a@x.org", "b@x.org", "c@x.org", "d@x.org"],
    });
  });

  it("takes a URL as it is, trimmed", () => {
    expect(channelConfig("slack", " https://hooks.slack.com/services/T/B/X ")).toEqual({
      url: "https://hooks.slack.com/services/T/B/X",
    });
  });

  it("puts a service's key where the server takes it, and an address only when given", () => {
    expect(channelConfig("pagerduty", "", " e93facc04764012d7bfb002500d5d1a6 ")).toEqual({
      routing_key: "e93facc04764012d7bfb002500d5d1a6",
    });
    expect(channelConfig("opsgenie", "https://api.eu.opsgenie.com", "k")).toEqual({
      api_key: "k",
      url: "https://api.eu.opsgenie.com",
    });
    expect(channelConfig("alertmanager", "http://am:9093", "")).toEqual({ url: "http://am:9093" });
    expect(channelConfig("alertmanager", "http://am:9093", "t0ken")).toEqual({ url: "http://am:9093", bearer_token: "t0ken" });
    expect(channelConfig("teams", "https://prod.workflows.example/x")).toEqual({ url: "https://prod.workflows.example/x" });
  });

  it("has a form for every kind the server knows", () => {
    const kinds: ChannelKind[] = ["email", "slack", "webhook", "pagerduty", "opsgenie", "teams", "alertmanager"];
    expect(Object.keys(CHANNEL_FORMS).sort()).toEqual([...kinds].sort());
  });
});

describe("alertWindow", () => {
  const now = new Date("2026-11-24T12:00:00Z");

  it("runs from an hour before a firing alert to now", () => {
    const window = alertWindow(alert({}), now);
    expect(window).toEqual({ start: "2026-11-24T09:00:00.000Z", end: "2026-11-24T12:00:00.000Z" });
  });

  it("ends ten minutes after a resolved alert", () => {
    const resolved = { ...alert({}), resolved_at: "2026-11-24T10:30:00Z" };
    expect(alertWindow(resolved, now).end).toBe("2026-11-24T10:40:00.000Z");
  });
});
