// Every server read and write the UI makes, as TanStack Query hooks.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { apiDelete, apiGet, apiPatch, apiPost, type Schemas } from "./client";
import type { operations } from "./schema";

export type Agent = Schemas["Agent"];
export type AgentRef = Schemas["AgentRef"];
export type AgentUtilization = Schemas["AgentUtilization"];
export type Choice = Schemas["Choice"];
export type Choices = Schemas["Choices"];
export type Finding = Schemas["Finding"];
export type GridCell = Schemas["GridCell"];
export type Mesh = Schemas["Mesh"];
export type MeshGrid = Schemas["MeshGrid"];
export type MeshTest = Schemas["MeshTest"];
export type PathAnalysis = Schemas["PathAnalysis"];
export type PathLabel = Schemas["PathLabel"];
export type RttMode = Schemas["RttMode"];
export type RttPoint = Schemas["RttPoint"];
export type RunAnalysis = Schemas["RunAnalysis"];
export type RttSeries = Schemas["RttSeries"];
export type Slot = Schemas["Slot"];
export type SlotState = Schemas["SlotStateEnum"];
export type User = Schemas["User"];
export type Utilization = Schemas["Utilization"];

// The analysis payloads inside PathAnalysis, defined once in contract/analysis.v1.schema.json:
// the server validates what it stores and serves against it, so the UI reads them as typed.
export type Buffers = Schemas["Buffers"];
export type CeilingSet = Schemas["CeilingSet"];
export type CeilingTerm = Schemas["CeilingTerm"];
export type CeilingsNow = Schemas["CeilingsNow"];
export type HostTuning = Schemas["HostTuning"];
export type IntervalStats = Schemas["IntervalStats"];
export type RunCeilings = Schemas["RunCeilings"];
export type RunEvidence = Schemas["RunEvidence"];
export type RunInputs = Schemas["RunInputs"];
export type TermName = Schemas["TermName"];
export type TimeModes = Schemas["TimeModes"];

/** How often live pages refresh: agents report every few seconds, so 30 s is fresh enough. */
export const REFRESH_MS = 30_000;
/** The analysis follows new runs within about a minute; throughput runs come hours apart. */
export const ANALYSIS_REFRESH_MS = 60_000;

export const queryKeys = {
  me: ["me"] as const,
  choices: ["choices"] as const,
  agents: ["agents"] as const,
  // The prefix of the Paths list and its sparklines (api/pathListQueries.ts).
  paths: ["analysis", "paths"] as const,
  rtt: (source: string, destination: string, start: string, end: string) =>
    ["rtt", source, destination, start, end] as const,
  meshes: ["meshes"] as const,
  pathAnalysis: (source: string, destination: string, goalBps: string, dailyVolumeBytes: string) =>
    ["analysis", "path", source, destination, goalBps, dailyVolumeBytes] as const,
  meshGrid: (mesh: string) => ["analysis", "grid", mesh] as const,
  utilization: ["slots", "utilization"] as const,
  slots: (state: string, agent: string, lookbackS: string, aheadS: string, limit: string) =>
    ["slots", "list", state, agent, lookbackS, aheadS, limit] as const,
};

export function useMe() {
  return useQuery({ queryKey: queryKeys.me, queryFn: () => apiGet<User>("/auth/me/"), retry: false });
}

export function useChoices() {
  return useQuery({
    queryKey: queryKeys.choices,
    queryFn: () => apiGet<Choices>("/choices/"),
    staleTime: Infinity,
  });
}

export function useAgents() {
  return useQuery({
    queryKey: queryKeys.agents,
    queryFn: () => apiGet<Agent[]>("/agents/"),
    refetchInterval: REFRESH_MS,
  });
}

export function useMeshes() {
  return useQuery({
    queryKey: queryKeys.meshes,
    queryFn: () => apiGet<Mesh[]>("/meshes/"),
    refetchInterval: REFRESH_MS,
  });
}

export function useSlotUtilization() {
  return useQuery({
    queryKey: queryKeys.utilization,
    queryFn: () => apiGet<Utilization>("/slots/utilization/"),
    refetchInterval: REFRESH_MS,
  });
}

export interface SlotQuery {
  /** Only slots in this state (a `slot_state` choice value); null for every state. */
  state: string | null;
  /** Only slots this agent sends or receives in; null for every agent. */
  agent: string | null;
  /** How far back the list starts, in seconds before now. */
  lookbackS: number;
  /** Where it ends, in seconds after now; undefined for the end of the plan. */
  aheadS?: number;
  limit: number;
}

export function useSlots({ state, agent, lookbackS, aheadS, limit }: SlotQuery) {
  return useQuery({
    // Like the RTT window, the start slides with each refresh: the key holds its distance from now.
    queryKey: queryKeys.slots(state ?? "", agent ?? "", String(lookbackS), String(aheadS ?? ""), String(limit)),
    queryFn: () => {
      const params = new URLSearchParams({
        start: new Date(Date.now() - lookbackS * 1000).toISOString(),
        limit: String(limit),
      });
      if (aheadS !== undefined) {
        params.set("end", new Date(Date.now() + aheadS * 1000).toISOString());
      }
      if (state !== null) {
        params.set("state", state);
      }
      if (agent !== null) {
        params.set("agent", agent);
      }
      return apiGet<Slot[]>(`/slots/?${params.toString()}`);
    },
    refetchInterval: REFRESH_MS,
    placeholderData: (previous) => previous,
  });
}

export interface RttQuery {
  source: string;
  destination: string;
  /** Length of the window that ends now, in seconds. */
  rangeS: number;
  maxPoints: number;
}

export function useRttSeries({ source, destination, rangeS, maxPoints }: RttQuery) {
  return useQuery({
    // The window slides with each refresh, so the key holds its length, not its ends.
    queryKey: queryKeys.rtt(source, destination, String(rangeS), String(maxPoints)),
    queryFn: () => {
      const end = new Date();
      const start = new Date(end.getTime() - rangeS * 1000);
      const params = new URLSearchParams({
        source,
        destination,
        start: start.toISOString(),
        end: end.toISOString(),
        max_points: String(maxPoints),
      });
      return apiGet<RttSeries>(`/paths/rtt/?${params.toString()}`);
    },
    refetchInterval: REFRESH_MS,
    placeholderData: (previous) => previous,
  });
}

export interface PathAnalysisOptions {
  /** The rate the advice aims for, in bit/s; null for the server's default (the link speed). */
  goalBps?: number | null;
  /** The volume the capacity plan moves each day, in bytes; null for the server's default. */
  dailyVolumeBytes?: number | null;
}

/** One path in depth: ceilings now, diagnosed runs, RTT modes, findings, advice, capacity plan. */
export function usePathAnalysis(source: string, destination: string, options: PathAnalysisOptions = {}) {
  const goalBps = options.goalBps ?? null;
  const dailyVolumeBytes = options.dailyVolumeBytes ?? null;
  return useQuery({
    queryKey: queryKeys.pathAnalysis(source, destination, String(goalBps ?? ""), String(dailyVolumeBytes ?? "")),
    queryFn: () => {
      const params = new URLSearchParams({ source, destination });
      if (goalBps !== null) {
        params.set("goal_bps", String(goalBps));
      }
      if (dailyVolumeBytes !== null) {
        params.set("daily_volume_bytes", String(dailyVolumeBytes));
      }
      return apiGet<PathAnalysis>(`/analysis/path/?${params.toString()}`);
    },
    refetchInterval: ANALYSIS_REFRESH_MS,
    // Keeps the panels readable while a new goal or volume is fetched, but never shows
    // another path's analysis while this one loads.
    placeholderData: (previous) =>
      previous?.source.id === source && previous.destination.id === destination ? previous : undefined,
  });
}

/** Every source -> destination of one mesh against its ceiling. */
export function useMeshGrid(mesh: string) {
  return useQuery({
    queryKey: queryKeys.meshGrid(mesh),
    queryFn: () => apiGet<MeshGrid>(`/analysis/meshes/${encodeURIComponent(mesh)}/grid/`),
    refetchInterval: ANALYSIS_REFRESH_MS,
  });
}

export function useLogin() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (credentials: Schemas["LoginRequest"]) => apiPost<User>("/auth/login/", credentials),
    onSuccess: (user) => {
      queryClient.setQueryData(queryKeys.me, user);
    },
  });
}

export function useLogout() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => apiPost<null>("/auth/logout/"),
    onSettled: () => {
      queryClient.clear();
    },
  });
}

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

/** RTT of a path over a fixed window (an incident's time), not one sliding with now. */
export function useRttWindow(source: string, destination: string, start: string, end: string, maxPoints: number) {
  return useQuery({
    queryKey: [...queryKeys.rtt(source, destination, start, end), String(maxPoints)] as const,
    queryFn: () => {
      const params = new URLSearchParams({ source, destination, start, end, max_points: String(maxPoints) });
      return apiGet<RttSeries>(`/paths/rtt/?${params.toString()}`);
    },
    enabled: source !== "" && destination !== "",
  });
}

// Agents: rename, revoke, decommission, and the enrolment tokens that add or re-key them.
export type EnrollmentToken = Schemas["EnrollmentToken"];
export type IssuedEnrollmentToken = Schemas["IssuedToken"];
export type EnrollmentTokenRequest = Schemas["EnrollmentTokenCreateRequest"];

export const inventoryKeys = {
  enrollmentTokens: ["enrollment-tokens"] as const,
};

/** What an agent change can alter elsewhere: meshes and plans name agents, the audit log records it. */
function invalidateAgentViews(client: ReturnType<typeof useQueryClient>) {
  return Promise.all([
    client.invalidateQueries({ queryKey: queryKeys.agents }),
    client.invalidateQueries({ queryKey: queryKeys.meshes }),
    client.invalidateQueries({ queryKey: queryKeys.paths }),
    client.invalidateQueries({ queryKey: ["slots"] }),
    client.invalidateQueries({ queryKey: auditKeys.all }),
  ]);
}

export function useRenameAgent() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, name }: { id: string; name: string }) => {
      const rename: Schemas["PatchedAgentRenameRequest"] = { name };
      return apiPatch<Agent>(`/agents/${encodeURIComponent(id)}/`, rename);
    },
    onSuccess: () => invalidateAgentViews(client),
  });
}

/** Revoke (its credential is refused from now on) or decommission (it leaves meshes; results stay). */
export function useAgentAction(verb: "revoke" | "decommission") {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => apiPost<Agent>(`/agents/${encodeURIComponent(id)}/${verb}/`),
    onSuccess: () => invalidateAgentViews(client),
  });
}

export function useEnrollmentTokens(enabled = true) {
  return useQuery({
    queryKey: inventoryKeys.enrollmentTokens,
    queryFn: () => apiGet<EnrollmentToken[]>("/enrollment-tokens/"),
    refetchInterval: REFRESH_MS,
    enabled,
  });
}

/** A new enrolment (or, with rekey, re-key) token; its secret is in the answer, once. */
export function useCreateEnrollmentToken() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (request: Partial<EnrollmentTokenRequest>) =>
      apiPost<IssuedEnrollmentToken>("/enrollment-tokens/", request),
    onSuccess: () =>
      Promise.all([
        client.invalidateQueries({ queryKey: inventoryKeys.enrollmentTokens }),
        client.invalidateQueries({ queryKey: auditKeys.all }),
      ]),
  });
}

export function useRevokeEnrollmentToken() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => apiDelete(`/enrollment-tokens/${id}/`),
    onSuccess: () =>
      Promise.all([
        client.invalidateQueries({ queryKey: inventoryKeys.enrollmentTokens }),
        client.invalidateQueries({ queryKey: auditKeys.all }),
      ]),
  });
}

// People and personal API tokens.
export type Person = Schemas["Person"];
export type PersonRequest = Schemas["PersonCreateRequest"];
export type PersonPatch = Schemas["PatchedPersonUpdateRequest"];
export type ApiToken = Schemas["ApiToken"];
export type ApiTokenScope = Schemas["TokenScopeEnum"];
export type IssuedApiToken = Schemas["IssuedApiToken"];
export type ApiTokenRequest = Schemas["ApiTokenCreateRequest"];

export const accountKeys = {
  people: ["people"] as const,
  apiTokens: ["api-tokens"] as const,
  apiTokenList: (everyone: boolean) => ["api-tokens", everyone ? "all" : "mine"] as const,
};

export function usePeople() {
  return useQuery({ queryKey: accountKeys.people, queryFn: () => apiGet<Person[]>("/people/") });
}

export function useCreatePerson() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (person: PersonRequest) => apiPost<Person>("/people/", person),
    onSuccess: () =>
      Promise.all([
        client.invalidateQueries({ queryKey: accountKeys.people }),
        client.invalidateQueries({ queryKey: auditKeys.all }),
      ]),
  });
}

/** Role, active, email or password of one person; the signed-in person's own role may change too. */
export function useUpdatePerson() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, patch }: { id: number; patch: PersonPatch }) => apiPatch<Person>(`/people/${id}/`, patch),
    onSuccess: () =>
      Promise.all([
        client.invalidateQueries({ queryKey: accountKeys.people }),
        client.invalidateQueries({ queryKey: queryKeys.me }),
        client.invalidateQueries({ queryKey: auditKeys.all }),
      ]),
  });
}

export type PasswordChange = Schemas["PasswordChangeRequest"];

/** Changes the signed-in person's own password; this session stays, their others end. */
export function useChangePassword() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (change: PasswordChange) => apiPost<null>("/auth/password/", change),
    onSuccess: () => client.invalidateQueries({ queryKey: auditKeys.all }),
  });
}

/** The caller's API tokens; `everyone` (admins) lists every person's. */
export function useApiTokens(everyone: boolean) {
  return useQuery({
    queryKey: accountKeys.apiTokenList(everyone),
    queryFn: () => apiGet<ApiToken[]>(everyone ? "/api-tokens/?all=true" : "/api-tokens/"),
  });
}

export function useCreateApiToken() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (request: ApiTokenRequest) => apiPost<IssuedApiToken>("/api-tokens/", request),
    onSuccess: () =>
      Promise.all([
        client.invalidateQueries({ queryKey: accountKeys.apiTokens }),
        client.invalidateQueries({ queryKey: auditKeys.all }),
      ]),
  });
}

/** Revokes a token; it stays listed, revoked. */
export function useRevokeApiToken() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => apiDelete(`/api-tokens/${id}/`),
    onSuccess: () =>
      Promise.all([
        client.invalidateQueries({ queryKey: accountKeys.apiTokens }),
        client.invalidateQueries({ queryKey: auditKeys.all }),
      ]),
  });
}

// The audit log (admins): every change, who made it, how, and its diff.
export type AuditEntry = Schemas["AuditEntry"];
export type AuditQuery = NonNullable<operations["audit_list"]["parameters"]["query"]>;

export const auditKeys = {
  all: ["audit"] as const,
  list: (query: string) => ["audit", "list", query] as const,
};

/** One page of entries, newest first; `before_id` pages to older ones. */
export function useAuditLog(query: AuditQuery) {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== "") {
      params.set(key, String(value));
    }
  }
  const search = params.toString();
  return useQuery({
    queryKey: auditKeys.list(search),
    queryFn: () => apiGet<AuditEntry[]>(`/audit/${search === "" ? "" : `?${search}`}`),
    placeholderData: (previous) => previous,
  });
}
