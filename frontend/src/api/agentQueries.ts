import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { apiDelete, apiGet, apiPatch, apiPost, type Schemas } from "./client";
import type { operations } from "./schema";
import { REFRESH_MS, queryKeys, type Agent } from "./queries";

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
      const rename: Schemas["PatchedAgentChangeRequest"] = { name };
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
