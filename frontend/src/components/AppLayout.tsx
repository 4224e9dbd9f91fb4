import { Suspense } from "react";
import { NavLink, Navigate, Outlet, useLocation, useNavigate } from "react-router-dom";

import { ApiError } from "../api/client";
import { useAlertSummary } from "../api/alertQueries";
import { useLogout, useMe } from "../api/queries";
import { atLeast } from "../lib/roles";
import { ErrorBoundary } from "./ErrorBoundary";
import { LoadError, Loading } from "./QueryState";

/** The signed-in frame: navigation, the user, and a login redirect when the session ends. */
export function AppLayout() {
  const me = useMe();
  const alerts = useAlertSummary();
  const logout = useLogout();
  const location = useLocation();
  const navigate = useNavigate();

  if (me.isPending) {
    return <Loading what="your session" />;
  }
  if (me.isError) {
    if (me.error instanceof ApiError && me.error.isUnauthenticated) {
      const next = encodeURIComponent(location.pathname + location.search);
      return <Navigate to={`/login?next=${next}`} replace />;
    }
    return <LoadError what="your session" error={me.error} />;
  }

  return (
    <div className="app">
      <header className="topbar">
        <span className="brand">Fathom</span>
        <nav>
          <NavLink to="/paths">Paths</NavLink>
          <NavLink to="/grid">Grid</NavLink>
          <NavLink to="/meshes">Meshes</NavLink>
          <NavLink to="/agents">Agents</NavLink>
          <NavLink to="/schedule">Schedule</NavLink>
          <NavLink to="/findings">Findings</NavLink>
          <NavLink to="/incidents">
            Incidents
            {alerts.data !== undefined && alerts.data.open + alerts.data.acknowledged > 0 && (
              <span
                className={alerts.data.open > 0 ? "count open" : "count"}
                title={`${String(alerts.data.open)} open, ${String(alerts.data.acknowledged)} acknowledged`}
              >
                {alerts.data.open > 0 ? alerts.data.open : alerts.data.acknowledged}
              </span>
            )}
          </NavLink>
          {atLeast(me.data.role, "admin") && <NavLink to="/people">People</NavLink>}
          {atLeast(me.data.role, "admin") && <NavLink to="/audit">Audit</NavLink>}
        </nav>
        <span className="user">
          <NavLink to="/tokens" title="Your password and personal API tokens">
            Account
          </NavLink>
          <span title={`Signed in as ${me.data.role}`}>
            {me.data.username} <span className="role">{me.data.role}</span>
          </span>
          <button
            type="button"
            className="link"
            onClick={() => {
              logout.mutate(undefined, {
                onSettled: () => {
                  void navigate("/login");
                },
              });
            }}
          >
            Sign out
          </button>
        </span>
      </header>
      {/* data-path changes in the same commit as the page: the URL changes before it, so
          browser checks wait for this to tell the new page from the old. */}
      <main data-path={location.pathname}>
        <ErrorBoundary key={location.pathname}>
          <Suspense fallback={<Loading what="the page" />}>
            <Outlet />
          </Suspense>
        </ErrorBoundary>
      </main>
    </div>
  );
}
