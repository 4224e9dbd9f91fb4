import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { DESTINATION, SOURCE } from "../../test/analysisFixtures";
import { mockApi, requestedUrls } from "../../test/mockApi";
import { ROUTE_A, ROUTES, hop } from "../../test/routeFixtures";
import { RoutesPanel } from "./RoutesPanel";

function renderPanel(body: unknown) {
  const fetchMock = mockApi({ "/api/v1/paths/routes/": body });
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={queryClient}>
      <RoutesPanel source={SOURCE.id} destination={DESTINATION.id} rangeS={86_400} rangeLabel="the last 24 hours" />
    </QueryClientProvider>,
  );
  return fetchMock;
}

describe("RoutesPanel", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it("says which routes the newest run took, draws them over time and diffs the two members", async () => {
    const fetchMock = renderPanel(ROUTES);
    const summary = await screen.findByTestId("routes-summary");
    expect(summary.textContent).toContain("2 routes in 3 trace runs");
    expect(summary.textContent).toContain("A (12 of 16 flows), B (4 of 16 flows)");
    expect(summary.textContent).toContain("Path MTU: 1500 bytes");
    expect(within(screen.getByTestId("route-timeline")).getAllByRole("listitem")).toHaveLength(2);
    expect(screen.getByRole("list", { name: "Route changes" }).textContent).toContain("+B");
    expect(screen.getByTestId("route-diff-summary").textContent).toContain("Routes A and B differ at 1 of 2 hops");
    const rows = within(screen.getByTestId("route-diff")).getAllByRole("row");
    expect(rows[1]?.className).toBe("differs");
    expect(rows[1]?.textContent).toContain("AS5408 GRNET");
    expect(rows[2]?.className).toBe("");
    const url = requestedUrls(fetchMock, "/api/v1/paths/routes/")[0];
    expect(url?.searchParams.get("source")).toBe(SOURCE.id);

    fireEvent.change(screen.getByLabelText("beside"), { target: { value: "A" } });
    expect(screen.getByTestId("route-diff-summary").textContent).toContain("Route A: 2 hops, reaches");
  });

  it("says when a route's hops all went unanswered", async () => {
    const silent = { ...ROUTE_A, hops: [hop(1, null), hop(2, null)], unanswered_hops: 2, reached: false };
    renderPanel({ ...ROUTES, routes: [silent], runs: [ROUTES.runs[0]], changes: [] });
    expect((await screen.findByTestId("route-diff-summary")).textContent).toContain("No hop of route A answered");
    expect(screen.getAllByText("* no answer")).toHaveLength(2);
    expect(screen.queryByTestId("route-timeline")).toBeNull();
  });

  it("explains an empty range, and a failed load", async () => {
    renderPanel({ ...ROUTES, routes: [], runs: [], changes: [] });
    expect((await screen.findByTestId("routes-empty")).textContent).toContain("last 24 hours");
  });

  it("shows a load error instead of an empty panel", async () => {
    renderPanel(500);
    expect(await screen.findByText(/Could not load the routes/)).toBeDefined();
  });
});
