// Renders a page (or the whole app) the way main.tsx does, against the fetch stub.
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render } from "@testing-library/react";
import type { ReactElement } from "react";
import { MemoryRouter } from "react-router-dom";

import { queryKeys, type Choices, type User } from "../api/queries";
import type { Role } from "../lib/roles";

/** `me` seeds the session, so role-dependent controls are settled at the first render. */
export function renderWithProviders(element: ReactElement, entry = "/", me?: User) {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  if (me !== undefined) {
    queryClient.setQueryData(queryKeys.me, me);
  }
  return render(
    <QueryClientProvider client={queryClient}>
      <MemoryRouter initialEntries={[entry]}>{element}</MemoryRouter>
    </QueryClientProvider>,
  );
}

export function meAs(role: Role, username = role === "admin" ? "ada" : role === "operator" ? "otto" : "vera"): User {
  return { username, email: `${username}@example.org`, is_staff: role !== "viewer", role };
}

/** Every choice list, empty unless given: pages fall back to bare values. */
export function choices(overrides: Partial<Choices> = {}): Choices {
  return {
    agent_kind: [],
    perfsonar_task_state: [],
    tls_mode: [],
    agent_status: [],
    alert_comparison: [],
    alert_metric: [],
    change_relation: [],
    alert_rule_kind: [],
    alert_severity: [],
    alert_state: [],
    audit_action: [],
    audit_object: [],
    delivery_status: [],
    diagnosis: [],
    finding_metric: [],
    finding_state: [],
    incident_status: [],
    role: [],
    rtt_mode_verdict: [],
    run_status: [],
    slot_state: [],
    token_scope: [],
    token_state: [],
    ...overrides,
  };
}

/** Routes every signed-in page needs: the session, CSRF and choices. */
export function sessionRoutes(role: Role, extraChoices: Partial<Choices> = {}) {
  return {
    "/api/v1/auth/me/": meAs(role),
    "/api/v1/auth/csrf/": { csrf_token: "test-csrf" },
    "/api/v1/choices/": choices(extraChoices),
    "/api/v1/alerts/summary/": { open: 0, acknowledged: 0, firing_alerts: 0 },
  };
}
