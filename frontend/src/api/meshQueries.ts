// The mesh editor's reads and writes: one mesh, its plan preview, its history, and the
// writes (save, delete, revert). A refused write's ApiError keeps the server's body, whose
// field errors (flattenErrors) the form shows beside the fields they concern.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { apiDelete, apiGet, apiPost, apiPut, type Schemas } from "./client";
import { queryKeys } from "./queries";

export type Mesh = Schemas["Mesh"];
export type MeshPayload = Schemas["MeshRequest"];
export type AuditEntry = Schemas["AuditEntry"];

export type MeshDraftRequest = Schemas["MeshDraftRequest"];
/** What saving a mesh would do to the plan: per agent slots and demand, and conflicts. */
export type PlanPreview = Schemas["MeshPreview"];
export type PlanPreviewAgent = Schemas["AgentPlanEffect"];

function meshPath(name: string): string {
  return `/meshes/${encodeURIComponent(name)}/`;
}

export const meshKeys = {
  /** The list (queries.ts) and everything below it. */
  all: queryKeys.meshes,
  mesh: (name: string) => [...queryKeys.meshes, "detail", name] as const,
  history: (name: string) => [...queryKeys.meshes, "history", name] as const,
  preview: (replaces: string, mesh: string) => [...queryKeys.meshes, "preview", replaces, mesh] as const,
};

export function useMesh(name: string | null) {
  return useQuery({
    queryKey: meshKeys.mesh(name ?? ""),
    queryFn: () => apiGet<Mesh>(meshPath(name ?? "")),
    enabled: name !== null,
    retry: false,
  });
}

export function useMeshHistory(name: string) {
  return useQuery({
    queryKey: meshKeys.history(name),
    queryFn: () => apiGet<AuditEntry[]>(`${meshPath(name)}history/`),
  });
}

/**
 * The plan a mesh would yield, asked for the mesh as JSON text (null: not yet); the last
 * answer stays shown while the next one loads.
 */
export function useMeshPreview(meshJson: string | null, replaces: string | null) {
  return useQuery({
    queryKey: meshKeys.preview(replaces ?? "", meshJson ?? ""),
    queryFn: () => {
      const draft: MeshDraftRequest = { mesh: JSON.parse(meshJson ?? "{}") as MeshPayload, replaces };
      return apiPost<PlanPreview>("/meshes/preview/", draft);
    },
    enabled: meshJson !== null,
    retry: false,
    staleTime: 10_000,
    placeholderData: (previous) => previous,
  });
}

/** Creates a mesh (original null) or replaces the whole one called original, which may be renamed. */
export function useSaveMesh(original: string | null) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (mesh: MeshPayload) =>
      original === null ? apiPost<Mesh>("/meshes/", mesh) : apiPut<Mesh>(meshPath(original), mesh),
    onSuccess: async (saved) => {
      if (original !== null && original !== saved.name) {
        client.removeQueries({ queryKey: meshKeys.mesh(original) });
      }
      client.setQueryData(meshKeys.mesh(saved.name), saved);
      await client.invalidateQueries({ queryKey: meshKeys.all, predicate: (query) => query.queryKey[1] !== "detail" });
    },
  });
}

export function useDeleteMesh(name: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => apiDelete(meshPath(name)),
    onSuccess: async () => {
      client.removeQueries({ queryKey: meshKeys.mesh(name) });
      await client.invalidateQueries({ queryKey: meshKeys.all });
    },
  });
}

/** Restores the mesh as it was before one change of its history; the answer is the mesh now. */
export function useRevertMesh(name: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (entry: number) => {
      const revert: Schemas["MeshRevertRequest"] = { entry };
      return apiPost<Mesh>(`${meshPath(name)}revert/`, revert);
    },
    onSuccess: async (mesh) => {
      client.setQueryData(meshKeys.mesh(mesh.name), mesh);
      await client.invalidateQueries({ queryKey: meshKeys.all, predicate: (query) => query.queryKey[1] !== "detail" });
    },
  });
}
