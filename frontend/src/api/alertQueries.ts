import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { apiGet, apiPatch, apiPost, type Schemas } from "./client";
import { REFRESH_MS } from "./queries";

// Alerting: incidents with their timeline and deliveries, rules, silences and channels.
export type AlertRule = Schemas["Rule"];
export type AlertSummary = Schemas["AlertSummary"];
export type Channel = Schemas["Channel"];
export type CreatedChannel = Schemas["CreatedChannel"];
export type Delivery = Schemas["Delivery"];
export type Incident = Schemas["Incident"];
export type IncidentAlert = Schemas["Alert"];
export type IncidentDetail = Schemas["IncidentDetail"];
export type Matcher = Schemas["Matcher"];
export type Silence = Schemas["Silence"];
export type SilenceRequest = Schemas["SilenceRequest"];

export const alertKeys = {
  all: ["alerts"] as const,
  summary: ["alerts", "summary"] as const,
  incidents: (status: string) => ["alerts", "incidents", status] as const,
  incident: (id: number) => ["alerts", "incident", id] as const,
  rules: ["alerts", "rules"] as const,
  silences: ["alerts", "silences"] as const,
  channels: ["alerts", "channels"] as const,
};

export function useAlertSummary() {
  return useQuery({
    queryKey: alertKeys.summary,
    queryFn: () => apiGet<AlertSummary>("/alerts/summary/"),
    refetchInterval: REFRESH_MS,
  });
}

/** Incidents newest first; status "" for every status. */
export function useIncidents(status: string) {
  return useQuery({
    queryKey: alertKeys.incidents(status),
    queryFn: () => apiGet<Incident[]>(`/alerts/incidents/${status === "" ? "" : `?status=${status}`}`),
    refetchInterval: REFRESH_MS,
    placeholderData: (previous) => previous,
  });
}

export function useIncident(id: number) {
  return useQuery({
    queryKey: alertKeys.incident(id),
    queryFn: () => apiGet<IncidentDetail>(`/alerts/incidents/${id}/`),
    refetchInterval: REFRESH_MS,
  });
}

/** Acknowledge or resolve, with a comment; every alerting view refreshes after. */
export function useIncidentAction(id: number, verb: "acknowledge" | "resolve") {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (comment: string) => apiPost<Incident>(`/alerts/incidents/${id}/${verb}/`, { comment }),
    onSuccess: () => client.invalidateQueries({ queryKey: alertKeys.all }),
  });
}

export function useAlertRules() {
  return useQuery({ queryKey: alertKeys.rules, queryFn: () => apiGet<AlertRule[]>("/alerts/rules/") });
}

export function useSilences() {
  return useQuery({
    queryKey: alertKeys.silences,
    queryFn: () => apiGet<Silence[]>("/alerts/silences/"),
    refetchInterval: REFRESH_MS,
  });
}

export function useCreateSilence() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (silence: SilenceRequest) => apiPost<Silence>("/alerts/silences/", silence),
    onSuccess: () => client.invalidateQueries({ queryKey: alertKeys.all }),
  });
}

export function useExpireSilence() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => apiPost<Silence>(`/alerts/silences/${id}/expire/`),
    onSuccess: () => client.invalidateQueries({ queryKey: alertKeys.all }),
  });
}

export function useChannels() {
  return useQuery({ queryKey: alertKeys.channels, queryFn: () => apiGet<Channel[]>("/alerts/channels/") });
}

/** Sends a test message now; the answer is the delivery with its attempt. */
export function useTestChannel() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => apiPost<Delivery>(`/alerts/channels/${id}/test/`),
    onSuccess: () => client.invalidateQueries({ queryKey: alertKeys.channels }),
  });
}

export type ChannelRequest = Schemas["ChannelRequest"];

/** Adds a channel; a webhook's signing secret is in the answer, once. */
export function useCreateChannel() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (channel: ChannelRequest) => apiPost<CreatedChannel>("/alerts/channels/", channel),
    onSuccess: () => client.invalidateQueries({ queryKey: alertKeys.channels }),
  });
}

export type RuleRequest = Schemas["RuleRequest"];
export type RulePatch = Schemas["PatchedRuleRequest"];

export function useCreateRule() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (rule: RuleRequest) => apiPost<AlertRule>("/alerts/rules/", rule),
    onSuccess: () => client.invalidateQueries({ queryKey: alertKeys.rules }),
  });
}

export function useUpdateRule() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, patch }: { id: number; patch: RulePatch }) => apiPatch<AlertRule>(`/alerts/rules/${id}/`, patch),
    onSuccess: () => client.invalidateQueries({ queryKey: alertKeys.rules }),
  });
}

