// What each role may do in the UI: viewers read, operators run things, admins manage
// people, rules, channels, others' tokens and the audit log. The server enforces the same
// split; the UI only hides controls a person could not use.
import type { Schemas } from "../api/client";
import { useMe } from "../api/queries";

export type Role = Schemas["RoleEnum"];

const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };

export const ROLES: readonly Role[] = ["viewer", "operator", "admin"];

/** Whether `role` has at least the rights of `needed`; nobody (null) has none. */
export function atLeast(role: Role | null | undefined, needed: Role): boolean {
  if (role === null || role === undefined || !(role in RANK)) {
    return false;
  }
  return RANK[role] >= RANK[needed];
}

/** The signed-in person's role, or null while the session loads (so nothing is offered yet). */
export function useRole(): Role | null {
  const me = useMe();
  return me.data?.role ?? null;
}

/** Whether the signed-in person may do what `needed` may. */
export function useCan(needed: Role): boolean {
  return atLeast(useRole(), needed);
}
