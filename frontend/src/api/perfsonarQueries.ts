// The perfSONAR reads and writes: nodes (add, check, remove, archive token, tasks), pSConfig
// import and publishing, and the failed runs of a path (pScheduler's nonstart, missed, …).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { withFamily } from "../lib/family";
import { apiDelete, apiGet, apiPatch, apiPost, type Schemas } from "./client";
import type {
  ArchiveToken,
  PathRun,
  PerfsonarNode,
  PerfsonarNodeRequest,
  PerfsonarTask,
  PsconfigImportReport,
  PsconfigImportRequest,
} from "./perfsonar";
import { meshKeys } from "./meshQueries";
import { auditKeys } from "./agentQueries";
import { queryKeys, REFRESH_MS, type Mesh } from "./queries";

/** The most runs GET /paths/runs/ returns at once (its `limit` maximum). */
export const RUNS_LIMIT = 1000;

export const perfsonarKeys = {
  all: ["perfsonar"] as const,
  nodes: ["perfsonar", "nodes"] as const,
  archiveToken: (name: string) => ["perfsonar", "archive-token", name] as const,
  tasks: (name: string) => ["perfsonar", "tasks", name] as const,
  failedRuns: (source: string, destination: string, rangeS: string, family: number = 4) =>
    ["runs", "failed", source, destination, rangeS, family] as const,
};

function nodePath(name: string): string {
  return `/perfsonar/nodes/${encodeURIComponent(name)}/`;
}

/** The signed-in download of a mesh as a pSConfig template. */
export function psconfigDownloadUrl(mesh: string): string {
  return `/api/v1/perfsonar/psconfig/${encodeURIComponent(mesh)}.json`;
}

/** Where perfSONAR nodes subscribe to a published mesh (no sign-in). */
export function psconfigPublicUrl(mesh: string, origin: string = window.location.origin): string {
  return `${origin}/psconfig/${encodeURIComponent(mesh)}.json`;
}

export function usePerfsonarNodes() {
  return useQuery({
    queryKey: perfsonarKeys.nodes,
    queryFn: () => apiGet<PerfsonarNode[]>("/perfsonar/nodes/"),
    refetchInterval: REFRESH_MS,
  });
}

/** A node is an agent too: adding or removing one changes the agents, meshes and paths. */
function invalidateNodeViews(client: ReturnType<typeof useQueryClient>) {
  return Promise.all([
    client.invalidateQueries({ queryKey: perfsonarKeys.all }),
    client.invalidateQueries({ queryKey: queryKeys.agents }),
    client.invalidateQueries({ queryKey: queryKeys.meshes }),
    client.invalidateQueries({ queryKey: queryKeys.paths }),
    client.invalidateQueries({ queryKey: auditKeys.all }),
  ]);
}

/** Registers a node; the server checks it at once, and registers it even when that fails. */
export function useAddPerfsonarNode() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (node: PerfsonarNodeRequest) => apiPost<PerfsonarNode>("/perfsonar/nodes/", node),
    onSuccess: () => invalidateNodeViews(client),
  });
}

/** Checks a node now; its row shows the answer without waiting for the next refresh. */
export function useCheckPerfsonarNode() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => apiPost<PerfsonarNode>(`${nodePath(name)}check/`),
    onSuccess: (checked) => {
      client.setQueryData<PerfsonarNode[]>(perfsonarKeys.nodes, (nodes) =>
        nodes?.map((node) => (node.name === checked.name ? checked : node)),
      );
    },
  });
}

/** Decommissions the node (its results stay); a worker then deletes Fathom's tasks from it,
 * and the node shows `removing_since` until it has. */
export function useRemovePerfsonarNode() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => apiDelete<PerfsonarNode>(nodePath(name)),
    onSuccess: () => invalidateNodeViews(client),
  });
}

/** The node's archive token (operators); asked for only while it is shown. */
export function useArchiveToken(name: string) {
  return useQuery({
    queryKey: perfsonarKeys.archiveToken(name),
    queryFn: () => apiGet<ArchiveToken>(`${nodePath(name)}archive-token/`),
    // A secret: not kept once the panel closes.
    gcTime: 0,
  });
}

export function useRotateArchiveToken(name: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => apiPost<ArchiveToken>(`${nodePath(name)}archive-token/`),
    onSuccess: async (token) => {
      client.setQueryData(perfsonarKeys.archiveToken(name), token);
      await client.invalidateQueries({ queryKey: auditKeys.all });
    },
  });
}

export function usePerfsonarTasks(name: string) {
  return useQuery({
    queryKey: perfsonarKeys.tasks(name),
    queryFn: () => apiGet<PerfsonarTask[]>(`${nodePath(name)}tasks/`),
    refetchInterval: REFRESH_MS,
  });
}

/** A dry run reports what an import would do; a real one does it and reports the same way. */
export function useImportPsconfig() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (request: PsconfigImportRequest) =>
      apiPost<PsconfigImportReport>("/perfsonar/psconfig/import/", request),
    onSuccess: (report) => (report.dry_run ? undefined : invalidateNodeViews(client)),
  });
}

/** Turns a mesh's public pSConfig template on or off; the answer is the mesh now. */
export function useSetPsconfigPublished(mesh: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (published: boolean) => {
      // Partial: the generated PATCH type requires `kind` because the field has a default.
      const patch: Partial<Schemas["PatchedMeshRequest"]> = { psconfig_published: published };
      return apiPatch<Mesh>(`/meshes/${encodeURIComponent(mesh)}/`, patch);
    },
    onSuccess: async (saved) => {
      client.setQueryData(meshKeys.mesh(saved.name), saved);
      await client.invalidateQueries({
        queryKey: meshKeys.all,
        predicate: (query) => query.queryKey[1] !== "detail",
      });
    },
  });
}

/**
 * The runs of one path (agent ids) that failed or were missed, in the window that ends now,
 * newest first: up to RUNS_LIMIT of them.
 */
export function useFailedRuns(source: string, destination: string, rangeS: number, family: number = 4) {
  return useQuery({
    queryKey: perfsonarKeys.failedRuns(source, destination, String(rangeS), family),
    queryFn: () => {
      const params = new URLSearchParams({
        source,
        destination,
        status: "failed",
        since: new Date(Date.now() - rangeS * 1000).toISOString(),
        limit: String(RUNS_LIMIT),
      });
      withFamily(params, family);
      return apiGet<PathRun[]>(`/paths/runs/?${params.toString()}`);
    },
    refetchInterval: REFRESH_MS,
    placeholderData: (previous) => previous,
  });
}
