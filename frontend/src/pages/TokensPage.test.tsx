import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { ApiToken, IssuedApiToken } from "../api/agentQueries";
import { mockApi, reply, requestedUrls, requests, type MockRequest } from "../test/mockApi";
import { meAs, renderWithProviders, sessionRoutes } from "../test/render";
import { TokensPage } from "./TokensPage";

function token(fields: Partial<ApiToken> & Pick<ApiToken, "id" | "name">): ApiToken {
  return {
    prefix: `fpt_${String(fields.id).padStart(4, "0")}`,
    scope: "read",
    created_at: "2025-01-01T00:00:00Z",
    expires_at: "2026-01-01T00:00:00Z",
    last_used_at: null,
    revoked_at: null,
    state: "active",
    user: "otto",
    ...fields,
  };
}

const MINE = [token({ id: 1, name: "grafana" })];
const EVERYONE = [...MINE, token({ id: 2, name: "backup script", user: "vera", scope: "write" })];

describe("TokensPage", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it("changes the person's own password once the new one is typed twice alike", async () => {
    const fetchMock = mockApi({
      ...sessionRoutes("viewer"),
      "GET /api/v1/api-tokens/": [],
      "POST /api/v1/auth/password/": reply(204),
    });
    renderWithProviders(<TokensPage />, "/tokens", meAs("viewer"));
    expect(await screen.findByRole("heading", { name: "Your account" })).toBeDefined();
    const form = screen.getByRole("form", { name: "Change your password" });
    fireEvent.change(within(form).getByLabelText("Current password"), { target: { value: "old secret" } });
    fireEvent.change(within(form).getByLabelText("New password"), { target: { value: "a longer secret" } });
    fireEvent.change(within(form).getByLabelText("Repeat the new password"), { target: { value: "a longer secret!" } });
    fireEvent.click(within(form).getByRole("button", { name: "Change password" }));

    const repeat = within(form).getByLabelText("Repeat the new password");
    expect(repeat.getAttribute("aria-invalid")).toBe("true");
    expect(repeat.closest(".field")?.textContent).toContain("does not match the new password");
    expect(requests(fetchMock, "/api/v1/auth/password/")).toHaveLength(0);

    fireEvent.change(repeat, { target: { value: "a longer secret" } });
    expect(repeat.getAttribute("aria-invalid")).toBeNull();
    fireEvent.click(within(form).getByRole("button", { name: "Change password" }));
    expect((await within(form).findByRole("status")).textContent).toContain("Your password is changed");
    expect(requests(fetchMock, "/api/v1/auth/password/", "POST")[0]?.body).toEqual({
      current_password: "old secret",
      new_password: "a longer secret",
    });
    expect(within(form).getByLabelText<HTMLInputElement>("Current password").value).toBe("");
    expect(within(form).getByLabelText<HTMLInputElement>("New password").value).toBe("");
  });

  it("shows the server's refusals beside the password fields", async () => {
    mockApi({
      ...sessionRoutes("operator"),
      "GET /api/v1/api-tokens/": [],
      "POST /api/v1/auth/password/": reply(400, {
        current_password: ["this is not your current password"],
        new_password: ["This password is too common."],
      }),
    });
    renderWithProviders(<TokensPage />, "/tokens", meAs("operator"));
    const form = await screen.findByRole("form", { name: "Change your password" });
    fireEvent.change(within(form).getByLabelText("Current password"), { target: { value: "guess" } });
    fireEvent.change(within(form).getByLabelText("New password"), { target: { value: "password" } });
    fireEvent.change(within(form).getByLabelText("Repeat the new password"), { target: { value: "password" } });
    fireEvent.click(within(form).getByRole("button", { name: "Change password" }));

    const wrong = await within(form).findByText("this is not your current password");
    expect(wrong.closest(".field")?.textContent).toContain("Current password");
    const common = within(form).getByText("This password is too common.");
    expect(common.closest(".field")?.textContent).toContain("New password");
    expect(within(form).queryByRole("status")).toBeNull();
  });

  it("shows a new token once, with a curl example, and forgets it after Done", async () => {
    let listed = MINE;
    const issued: IssuedApiToken = { ...token({ id: 3, name: "report", scope: "read" }), token: "fpt_thewholesecret" };
    const fetchMock = mockApi({
      ...sessionRoutes("operator"),
      "GET /api/v1/api-tokens/": () => listed,
      "POST /api/v1/api-tokens/": () => {
        listed = [...MINE, { ...issued, token: undefined } as unknown as ApiToken];
        return reply(201, issued);
      },
    });
    renderWithProviders(<TokensPage />, "/tokens", meAs("operator"));
    expect(await screen.findByText("grafana")).toBeDefined();
    fireEvent.change(screen.getByLabelText("Name"), { target: { value: "report" } });
    fireEvent.change(screen.getByLabelText("Expires"), { target: { value: "longest" } });
    fireEvent.click(screen.getByRole("button", { name: "Create token" }));

    expect((await screen.findByTestId("once-secret")).textContent).toBe("fpt_thewholesecret");
    expect(
      screen.getByText(`curl -H "Authorization: Bearer fpt_thewholesecret" ${window.location.origin}/api/v1/paths/`),
    ).toBeDefined();
    expect(screen.getByText(/Shown once/)).toBeDefined();
    expect(requests(fetchMock, "/api/v1/api-tokens/", "POST")[0]?.body).toEqual({
      name: "report",
      scope: "read",
      expires_at: null,
    });

    fireEvent.click(screen.getByRole("button", { name: "Done" }));
    expect(await screen.findByText("report")).toBeDefined();
    expect(screen.queryByText(/fpt_thewholesecret/)).toBeNull();
    expect(screen.queryByTestId("once-secret")).toBeNull();
  });

  it("shows the server's refusal of a past date beside the date", async () => {
    const refusal = "must be in the future";
    mockApi({
      ...sessionRoutes("operator"),
      "GET /api/v1/api-tokens/": MINE,
      "POST /api/v1/api-tokens/": (request: MockRequest) => {
        expect((request.body as { expires_at: string }).expires_at).toBe("2020-01-01T00:00:00.000Z");
        return reply(400, { expires_at: [refusal] });
      },
    });
    renderWithProviders(<TokensPage />, "/tokens", meAs("operator"));
    fireEvent.change(await screen.findByLabelText("Name"), { target: { value: "old" } });
    fireEvent.change(screen.getByLabelText("Expires"), { target: { value: "date" } });
    fireEvent.change(screen.getByLabelText("Expiry date (UTC)"), { target: { value: "2020-01-01" } });
    fireEvent.click(screen.getByRole("button", { name: "Create token" }));
    const message = await screen.findByText(refusal);
    expect(message.closest(".field")?.textContent).toContain("Expiry date (UTC)");
  });

  it("lets an admin list and revoke everyone's tokens", async () => {
    const fetchMock = mockApi({
      ...sessionRoutes("admin"),
      "GET /api/v1/api-tokens/": (request: MockRequest) => (request.url.searchParams.get("all") === "true" ? EVERYONE : []),
      "DELETE /api/v1/api-tokens/2/": reply(204),
    });
    renderWithProviders(<TokensPage />, "/tokens", meAs("admin"));
    expect(await screen.findByText(/You have no API tokens/)).toBeDefined();
    fireEvent.click(screen.getByLabelText("Everyone's tokens"));
    const row = (await screen.findByText("backup script")).closest("tr");
    if (row === null) {
      throw new Error("no row for the backup script token");
    }
    expect(row.textContent).toContain("vera");
    expect(requestedUrls(fetchMock, "/api/v1/api-tokens/").some((url) => url.search === "?all=true")).toBe(true);
    fireEvent.click(within(row).getByRole("button", { name: "Revoke" }));
    fireEvent.click(within(row).getByRole("button", { name: "Revoke" }));
    await waitFor(() => {
      expect(requests(fetchMock, "/api/v1/api-tokens/2/", "DELETE")).toHaveLength(1);
    });
  });

  it("offers a non-admin neither everyone's tokens nor revoking others'", async () => {
    mockApi({ ...sessionRoutes("viewer"), "GET /api/v1/api-tokens/": [token({ id: 4, name: "someone else's", user: "ada" })] });
    renderWithProviders(<TokensPage />, "/tokens", meAs("viewer"));
    expect(await screen.findByText("someone else's")).toBeDefined();
    expect(screen.queryByLabelText("Everyone's tokens")).toBeNull();
    expect(screen.queryByRole("button", { name: "Revoke" })).toBeNull();
  });
});
