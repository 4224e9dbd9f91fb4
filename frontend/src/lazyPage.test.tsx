import { render, screen } from "@testing-library/react";
import { Suspense, type ComponentType } from "react";
import { describe, expect, it } from "vitest";

import { lazyPage } from "./lazyPage";

function Hello({ name }: { name: string }) {
  return <p>Hello {name}</p>;
}

function shown(Page: ComponentType<{ name: string }>) {
  return render(
    <Suspense fallback={<p>Loading the page…</p>}>
      <Page name="athens" />
    </Suspense>,
  );
}

describe("lazyPage", () => {
  it("draws a page whose chunk is in at once, without the fallback", async () => {
    const page = lazyPage(() => Promise.resolve(Hello));
    await page.fetch();
    shown(page.Page);
    expect(screen.getByText("Hello athens")).toBeDefined();
    expect(screen.queryByText("Loading the page…")).toBeNull();
  });

  it("shows the fallback until a chunk nobody fetched ahead arrives", async () => {
    let loads = 0;
    const page = lazyPage(() => {
      loads += 1;
      return Promise.resolve(Hello);
    });
    shown(page.Page);
    expect(screen.getByText("Loading the page…")).toBeDefined();
    expect(await screen.findByText("Hello athens")).toBeDefined();
    expect(loads).toBe(1);
  });
});
