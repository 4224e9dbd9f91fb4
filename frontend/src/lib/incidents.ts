// Pure helpers of the alerting pages: what a silence "from here" covers, and readable matchers.
import type { Schemas } from "../api/client";
import type { IncidentAlert, Matcher, SilenceRequest } from "../api/alertQueries";
import type { Family } from "./family";

type MatcherRequest = Schemas["MatcherRequest"];

/** The labels an alert carries that a silence can match (the server's label names). */
interface AlertLabels {
  path?: string | undefined;
  agent?: string[];
  metric?: string | undefined;
}

export function alertLabels(alert: IncidentAlert): AlertLabels {
  const raw = (alert.labels ?? {}) as Record<string, unknown>;
  const agents = Array.isArray(raw.agent) ? raw.agent.filter((a): a is string => typeof a === "string") : [];
  return {
    path: typeof raw.path === "string" ? raw.path : undefined,
    agent: agents,
    metric: typeof raw.metric === "string" ? raw.metric : undefined,
  };
}

/**
 * A silence for what an alert is about: its path and metric, or for an agent-down alert its
 * agent; from now for `hours`.
 */
export function silenceFor(alert: IncidentAlert, hours: number, comment: string, now: Date = new Date()): SilenceRequest {
  const labels = alertLabels(alert);
  const matchers: MatcherRequest[] = [];
  if (labels.path !== undefined) {
    matchers.push({ name: "path", op: "=", value: labels.path });
    if (labels.metric !== undefined) {
      matchers.push({ name: "metric", op: "=", value: labels.metric });
    }
  } else if (labels.agent !== undefined && labels.agent.length > 0) {
    matchers.push({ name: "agent", op: "=", value: labels.agent[0] ?? "" });
  }
  return {
    matchers,
    starts_at: now.toISOString(),
    ends_at: new Date(now.getTime() + hours * 3_600_000).toISOString(),
    comment,
  };
}

export function matcherText(matchers: readonly (Matcher | MatcherRequest)[]): string {
  return matchers.map((m) => `${m.name}${m.op}"${m.value}"`).join(", ");
}

/** The path page of an alert, if it is about a path. */
export function pathLink(alert: IncidentAlert): string | null {
  const ends = pathEnds(alert);
  return ends === null ? null : `/paths/${ends.source}/${ends.destination}${ends.family === 6 ? "?family=6" : ""}`;
}

/** The server's channel kinds: a form below for each (a kind added there fails tsc here). */
export type ChannelKind = Schemas["ChannelKindEnum"];

/** A channel's config from what the form asks: addresses for email, a URL otherwise. */
/** What the channel form asks of each kind: where it sends and, for a service, its key. */
export interface ChannelForm {
  label: string;
  target: { label: string; hint: string; optional: boolean };
  secret: { label: string; hint: string; optional: boolean } | null;
}

export const CHANNEL_FORMS: Record<ChannelKind, ChannelForm> = {
  email: { label: "email", target: { label: "Sends to", hint: "noc@example.org, oncall@example.org", optional: false }, secret: null },
  slack: { label: "Slack", target: { label: "Webhook URL", hint: "https://hooks.slack.com/services/…", optional: false }, secret: null },
  webhook: { label: "webhook", target: { label: "URL", hint: "https://tickets.example.org/fathom", optional: false }, secret: null },
  pagerduty: {
    label: "PagerDuty",
    target: { label: "Events API URL", hint: "https://events.pagerduty.com/v2/enqueue (the default)", optional: true },
    secret: { label: "Integration key", hint: "32 characters, from the service's Events API v2 integration", optional: false },
  },
  opsgenie: {
    label: "Opsgenie",
    target: { label: "API URL", hint: "https://api.opsgenie.com (the default; EU: https://api.eu.opsgenie.com)", optional: true },
    secret: { label: "API key", hint: "an API integration's key", optional: false },
  },
  teams: {
    label: "Microsoft Teams",
    target: { label: "Workflow URL", hint: "the URL of a Teams workflow that posts webhook requests", optional: false },
    secret: null,
  },
  alertmanager: {
    label: "Alertmanager",
    target: { label: "Alertmanager URL", hint: "http://alertmanager.example.org:9093", optional: false },
    secret: { label: "Bearer token", hint: "only behind a proxy that asks for one", optional: true },
  },
};

/** A channel's config as the server takes it, from the form's two fields. */
export function channelConfig(kind: ChannelKind, target: string, secret = ""): Record<string, unknown> {
  const url = target.trim();
  const key = secret.trim();
  switch (kind) {
    case "email":
      return { to: target.split(/[\s,;]+/).filter((address) => address !== "") };
    case "pagerduty":
      return { routing_key: key, ...(url === "" ? {} : { url }) };
    case "opsgenie":
      return { api_key: key, ...(url === "" ? {} : { url }) };
    case "alertmanager":
      return { url, ...(key === "" ? {} : { bearer_token: key }) };
    default:
      return { url };
  }
}

/** The two ends of a path alert (agent ids), or null for an agent alert. */
export function pathEnds(alert: IncidentAlert): { source: string; destination: string; family: Family } | null {
  const raw = (alert.labels ?? {}) as Record<string, unknown>;
  const source = raw.source_id;
  const destination = raw.destination_id;
  // Alerts from before IPv6 carry no family: their paths are IPv4.
  const family: Family = raw.family === "ipv6" ? 6 : 4;
  return typeof source === "string" && typeof destination === "string" ? { source, destination, family } : null;
}

/** From an hour before an alert started to 10 minutes after it resolved (or now, if sooner). */
export function alertWindow(alert: IncidentAlert, now: Date): { start: string; end: string } {
  const start = new Date(Date.parse(alert.started_at) - 3_600_000);
  const resolved = alert.resolved_at === null ? now.getTime() : Date.parse(alert.resolved_at) + 600_000;
  return { start: start.toISOString(), end: new Date(Math.min(resolved, now.getTime())).toISOString() };
}
