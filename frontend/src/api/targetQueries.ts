// External targets (a list mesh's far ends: host names or addresses without an agent): every
// agent -> target path (GET /targets/), and one path's RTT, latency, runs and routes.
import { useQuery } from "@tanstack/react-query";

import { apiGet, type Schemas } from "./client";
import { ANALYSIS_REFRESH_MS, REFRESH_MS } from "./queries";

export type TargetPath = Schemas["Target"];
export type TargetList = Schemas["TargetList"];
export type TargetRttSeries = Schemas["TargetRttSeries"];
/** A latency test (TWAMP-light) towards the device's own reflector: the points of a path's (lib/latencyTraces.ts). */
export type TargetLatencySeries = Schemas["TargetLatencySeries"];
export type TargetRuns = Schemas["TargetRuns"];
export type TargetRun = Schemas["TargetRun"];
export type TargetRoutes = Schemas["TargetRoutes"];

/** The most runs one request of GET /targets/runs/ returns (its `limit` maximum). */
export const TARGET_RUNS_LIMIT = 500;

export const targetKeys = {
  all: ["targets"] as const,
  list: ["targets", "list"] as const,
  rtt: (source: string, target: string, from: string, to: string) => ["targets", "rtt", source, target, from, to] as const,
  latency: (source: string, target: string, from: string, to: string) =>
    ["targets", "latency", source, target, from, to] as const,
  runs: (source: string, target: string) => ["targets", "runs", source, target] as const,
  routes: (source: string, target: string, from: string, to: string) =>
    ["targets", "routes", source, target, from, to] as const,
};

export function useTargets() {
  return useQuery({
    queryKey: targetKeys.list,
    queryFn: () => apiGet<TargetList>("/targets/"),
    refetchInterval: REFRESH_MS,
  });
}

/** `live`: the range ends now, so `to` is left out and the server reads up to its own now. */
function rangeParams(source: string, target: string, from: Date, to: Date, live: boolean): URLSearchParams {
  const params = new URLSearchParams({ source, target, from: from.toISOString() });
  if (!live) {
    params.set("to", to.toISOString());
  }
  return params;
}

export function useTargetRtt(source: string, target: string, from: Date, to: Date, live: boolean) {
  return useQuery({
    queryKey: targetKeys.rtt(source, target, from.toISOString(), live ? "now" : to.toISOString()),
    queryFn: () => {
      const params = rangeParams(source, target, from, to, live);
      params.set("max_points", "1000");
      return apiGet<TargetRttSeries>(`/targets/rtt/?${params.toString()}`);
    },
    refetchInterval: REFRESH_MS,
    placeholderData: (previous) => previous,
  });
}

/** `enabled`: only a target with a latency test has anything to ask for. */
export function useTargetLatency(source: string, target: string, from: Date, to: Date, live: boolean, enabled: boolean) {
  return useQuery({
    queryKey: targetKeys.latency(source, target, from.toISOString(), live ? "now" : to.toISOString()),
    queryFn: () => {
      const params = rangeParams(source, target, from, to, live);
      params.set("max_points", "1000");
      return apiGet<TargetLatencySeries>(`/targets/latency/?${params.toString()}`);
    },
    enabled,
    refetchInterval: REFRESH_MS,
    placeholderData: (previous) => previous,
  });
}

/** The newest runs of every kind (one page: the failures among them are what the page lists). */
export function useTargetRuns(source: string, target: string) {
  return useQuery({
    queryKey: targetKeys.runs(source, target),
    queryFn: () => {
      const params = new URLSearchParams({ source, target, limit: String(TARGET_RUNS_LIMIT) });
      return apiGet<TargetRuns>(`/targets/runs/?${params.toString()}`);
    },
    refetchInterval: REFRESH_MS,
  });
}

export function useTargetRoutes(source: string, target: string, from: Date, to: Date, live: boolean) {
  return useQuery({
    queryKey: targetKeys.routes(source, target, from.toISOString(), live ? "now" : to.toISOString()),
    queryFn: () => apiGet<TargetRoutes>(`/targets/routes/?${rangeParams(source, target, from, to, live).toString()}`),
    refetchInterval: ANALYSIS_REFRESH_MS,
    placeholderData: (previous) => previous,
  });
}
