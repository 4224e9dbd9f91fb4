// The session, the choices, agents, meshes, slots and a path's analysis as TanStack Query
// hooks; each other domain has its own *Queries.ts beside this one.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { withFamily } from "../lib/family";
import { apiGet, apiPost, type Schemas } from "./client";

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
export type StreamsProbe = Schemas["StreamsProbe"];
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
  rtt: (source: string, destination: string, start: string, end: string, family: number = 4) =>
    ["rtt", source, destination, start, end, family] as const,
  meshes: ["meshes"] as const,
  pathAnalysis: (source: string, destination: string, goalBps: string, dailyVolumeBytes: string, family: number = 4) =>
    ["analysis", "path", source, destination, goalBps, dailyVolumeBytes, family] as const,
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

export interface PathAnalysisOptions {
  /** The rate the advice aims for, in bit/s; null for the server's default (the link speed). */
  goalBps?: number | null;
  /** The volume the capacity plan moves each day, in bytes; null for the server's default. */
  dailyVolumeBytes?: number | null;
  /** The path's address family (IPv4 by default). */
  family?: number;
}

/** One path in depth: ceilings now, diagnosed runs, RTT modes, findings, advice, capacity plan. */
export function usePathAnalysis(source: string, destination: string, options: PathAnalysisOptions = {}) {
  const goalBps = options.goalBps ?? null;
  const dailyVolumeBytes = options.dailyVolumeBytes ?? null;
  const family = options.family ?? 4;
  return useQuery({
    queryKey: queryKeys.pathAnalysis(
      source,
      destination,
      String(goalBps ?? ""),
      String(dailyVolumeBytes ?? ""),
      family,
    ),
    queryFn: () => {
      const params = withFamily(new URLSearchParams({ source, destination }), family);
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
      previous?.source.id === source && previous.destination.id === destination && previous.family === family
        ? previous
        : undefined,
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

/** RTT of a path over a fixed window (an incident's time), not one sliding with now. */
export function useRttWindow(
  source: string,
  destination: string,
  start: string,
  end: string,
  maxPoints: number,
  family: number = 4,
) {
  return useQuery({
    queryKey: [...queryKeys.rtt(source, destination, start, end, family), String(maxPoints)] as const,
    queryFn: () => {
      const params = withFamily(
        new URLSearchParams({ source, destination, start, end, max_points: String(maxPoints) }),
        family,
      );
      return apiGet<RttSeries>(`/paths/rtt/?${params.toString()}`);
    },
    enabled: source !== "" && destination !== "",
  });
}

