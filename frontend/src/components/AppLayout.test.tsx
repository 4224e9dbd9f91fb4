import { fireEvent, screen } from "@testing-library/react";
import { Route, Routes } from "react-router-dom";
import { afterEach, describe, expect, it, vi } from "vitest";

import { mockApi } from "../test/mockApi";
import { renderWithProviders, sessionRoutes } from "../test/render";
import { AppLayout } from "./AppLayout";

function renderApp(entry: string) {
  mockApi(sessionRoutes("admin"));
  return renderWithProviders(
    <Routes>
      <Route element={<AppLayout />}>
        <Route path="/paths" element={<h1>Paths page</h1>} />
        <Route path="/audit" element={<h1>Audit page</h1>} />
      </Route>
    </Routes>,
    entry,
  );
}

describe("AppLayout", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it("marks the main area with the path of the page it shows, in the same render as the page", async () => {
    const { container } = renderApp("/paths");
    await screen.findByRole("heading", { name: "Paths page" });
    expect(container.querySelector("main")?.dataset.path).toBe("/paths");
    fireEvent.click(screen.getByRole("link", { name: "Audit" }));
    await screen.findByRole("heading", { name: "Audit page" });
    expect(container.querySelector("main")?.dataset.path).toBe("/audit");
  });
});
