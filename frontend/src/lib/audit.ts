// The audit page's filters, kept in the URL query so a filtered view can be shared and reloaded.
import type { AuditQuery } from "../api/agentQueries";

export const AUDIT_PAGE_SIZE = 50;

/** Filters as the URL and the form hold them: plain strings, "" for unset. */
export interface AuditFilters {
  object_type: string;
  object_key: string;
  action: string;
  actor: string;
  q: string;
  /** UTC, as a datetime-local input writes it: "2025-03-01T09:30". */
  since: string;
  until: string;
}

export const AUDIT_FILTER_KEYS = ["object_type", "object_key", "action", "actor", "q", "since", "until"] as const;

export const NO_AUDIT_FILTERS: AuditFilters = {
  object_type: "",
  object_key: "",
  action: "",
  actor: "",
  q: "",
  since: "",
  until: "",
};

export function auditFiltersFrom(params: URLSearchParams): AuditFilters {
  const filters = { ...NO_AUDIT_FILTERS };
  for (const key of AUDIT_FILTER_KEYS) {
    filters[key] = params.get(key)?.trim() ?? "";
  }
  return filters;
}

export function hasAuditFilters(filters: AuditFilters): boolean {
  return AUDIT_FILTER_KEYS.some((key) => filters[key] !== "");
}

/** The URL query for filters and a page: unset filters and the first page leave no trace. */
export function auditParams(filters: AuditFilters, beforeId: number | null): URLSearchParams {
  const params = new URLSearchParams();
  for (const key of AUDIT_FILTER_KEYS) {
    if (filters[key] !== "") {
      params.set(key, filters[key]);
    }
  }
  if (beforeId !== null) {
    params.set("before_id", String(beforeId));
  }
  return params;
}

/** A datetime-local value read as UTC, as an ISO time the API takes; other text passes as typed. */
export function utcIso(local: string): string {
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(local) ? `${local}:00Z` : local;
}

/** The page number in before_id, or null for the newest page (and for anything unreadable). */
export function beforeIdFrom(params: URLSearchParams): number | null {
  const value = Number(params.get("before_id") ?? "");
  return Number.isInteger(value) && value > 0 ? value : null;
}

/** What the API is asked: the URL's filters (the server refuses an unknown type or action). */
export function auditQueryOf(filters: AuditFilters, beforeId: number | null): AuditQuery {
  const query: AuditQuery = { limit: AUDIT_PAGE_SIZE };
  if (filters.object_type !== "") {
    query.object_type = filters.object_type as NonNullable<AuditQuery["object_type"]>;
  }
  if (filters.object_key !== "") {
    query.object_key = filters.object_key;
  }
  if (filters.action !== "") {
    query.action = filters.action as NonNullable<AuditQuery["action"]>;
  }
  if (filters.actor !== "") {
    query.actor = filters.actor;
  }
  if (filters.q !== "") {
    query.q = filters.q;
  }
  if (filters.since !== "") {
    query.since = utcIso(filters.since);
  }
  if (filters.until !== "") {
    query.until = utcIso(filters.until);
  }
  if (beforeId !== null) {
    query.before_id = beforeId;
  }
  return query;
}
