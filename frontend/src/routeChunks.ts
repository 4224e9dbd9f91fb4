// The pages that draw charts and are opened from links (an alert, a finding, a colleague):
// their chunks (App.tsx renders them), and what a browser opened directly on one of them
// starts fetching before the session check answers.
import { lazyPage } from "./lazyPage";

export const pathPage = lazyPage(() => import("./pages/PathPage").then((module) => module.PathPage));
export const targetPage = lazyPage(() => import("./pages/target/TargetPage").then((module) => module.TargetPage));

const AHEAD = [
  { pattern: /^\/paths\/[^/]+\/[^/]+\/?$/, page: pathPage },
  { pattern: /^\/targets\/[^/]+\/[^/]+\/?$/, page: targetPage },
];

/**
 * Opened at a path or target page: its chunk loads beside the session check instead of after
 * it, so the page draws as soon as the session is known. Plotly is not fetched here: running
 * it holds the main thread for about half a second on a slow machine, which must not delay
 * the page's data queries; the page starts it as it mounts (usePlotlyAhead). Other pages
 * load as they render.
 */
export function loadAhead(pathname: string): void {
  const ahead = AHEAD.find(({ pattern }) => pattern.test(pathname));
  ahead?.page.fetch().catch(() => undefined); // a failed chunk is the router's to show when it renders
}
