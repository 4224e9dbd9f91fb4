import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen, within } from "@testing-library/react";
import { MemoryRouter } from "react-router-dom";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { Finding, Mesh } from "../api/queries";
import { CHOICES, FINDING } from "../test/analysisFixtures";
import { mockApi, requestedUrls, type ApiRoutes } from "../test/mockApi";
import { FindingsPage } from "./FindingsPage";

const NOW = new Date("2026-11-22T14:00:00Z");
const ALARM: Finding = {
  ...FINDING,
  id: 9,
  kind: "alarm",
  metric: "rtt",
  rules: ["level"],
  direction: "up",
  magnitude: 4.1,
  unit: "ms",
  annotation: "",
  detected_at: "2026-11-22T13:00:00Z",
};
const MESHES: Pick<Mesh, "name">[] = [{ name: "lhcone" }, { name: "default" }];

function renderPage(entry = "/findings", routes: ApiRoutes = {}) {
  const fetchMock = mockApi({
    "/api/v1/analysis/findings/": [ALARM, FINDING],
    "/api/v1/choices/": CHOICES,
    "/api/v1/meshes/": MESHES,
    ...routes,
  });
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={queryClient}>
      <MemoryRouter initialEntries={[entry]}>
        <FindingsPage now={NOW} />
      </MemoryRouter>
    </QueryClientProvider>,
  );
  return fetchMock;
}

describe("FindingsPage", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it("lists findings across paths with their change, state and a link to the path at the finding", async () => {
    renderPage();
    const link = (await screen.findAllByRole("link", { name: "dca → dcb" }))[0];
    const href = new URL(link?.getAttribute("href") ?? "", "http://x");
    expect(href.searchParams.get("from")).toBe("2026-11-22T05:00:00.000Z");
    expect(screen.getByText(/2 findings, 1 open alarm;/)).toBeDefined();
    const rows = screen.getAllByRole("row").slice(1);
    expect(within(rows[0] as HTMLElement).getByText(/\+4\.10 ms/)).toBeDefined();
    expect(within(rows[1] as HTMLElement).getByText("annotation")).toBeDefined();
  });

  it("sends the URL's filters and a 7-day window, and changes them from the controls", async () => {
    const fetchMock = renderPage("/findings?metric=rtt&mesh=lhcone");
    await screen.findAllByRole("link", { name: "dca → dcb" });
    const first = requestedUrls(fetchMock, "/api/v1/analysis/findings/")[0];
    expect(first?.searchParams.get("metric")).toBe("rtt");
    expect(first?.searchParams.get("mesh")).toBe("lhcone");
    const since = new Date(first?.searchParams.get("since") ?? "").getTime();
    expect(Math.abs(Date.now() - 7 * 86_400_000 - since)).toBeLessThan(60_000);

    fireEvent.click(screen.getByRole("button", { name: "All time" }));
    fireEvent.change(screen.getByLabelText("State"), { target: { value: "open" } });
    await vi.waitFor(() => {
      const last = requestedUrls(fetchMock, "/api/v1/analysis/findings/").at(-1);
      expect(last?.searchParams.get("state")).toBe("open");
      expect(last?.searchParams.has("since")).toBe(false);
      expect(last?.searchParams.get("metric")).toBe("rtt");
    });
    // Both families unless one is chosen.
    expect(first?.searchParams.has("family")).toBe(false);
    fireEvent.change(screen.getByLabelText("Family"), { target: { value: "6" } });
    await vi.waitFor(() => {
      expect(requestedUrls(fetchMock, "/api/v1/analysis/findings/").at(-1)?.searchParams.get("family")).toBe("6");
    });
  });

  it("says when nothing matches the filters", async () => {
    renderPage("/findings?state=cleared", { "/api/v1/analysis/findings/": [] });
    expect((await screen.findByTestId("findings-empty")).textContent).toContain("No findings match these filters");
  });

  it("shows a load error instead of a blank list", async () => {
    renderPage("/findings", { "/api/v1/analysis/findings/": 500 });
    expect(await screen.findByText(/Could not load findings/)).toBeDefined();
  });
});
