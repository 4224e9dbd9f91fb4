import { cleanup, configure } from "@testing-library/react";
import { afterEach } from "vitest";

// findBy and waitFor give up after 1 s by default; on CI's two cores beside the lab lane a
// render can take longer than that (see testTimeout in vite.config.ts).
configure({ asyncUtilTimeout: 10_000 });

afterEach(() => {
  cleanup();
});
