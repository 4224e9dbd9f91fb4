// Pages as chunks of their own (App.tsx), drawn at once when their chunk is already in.
import { createElement, lazy, useState, type ComponentType } from "react";

export interface LazyPage<P extends object> {
  Page: ComponentType<P>;
  /** Fetches the page's chunk now, ahead of its first render. */
  fetch: () => Promise<void>;
}

/**
 * A page loaded on first use. React.lazy alone suspends on every first render, even of a
 * chunk that has arrived, and React holds a revealed Suspense boundary back for 300 ms: a
 * fifth of a cold path page's time to its first chart (make bench-ui). A page whose chunk is
 * in when it mounts is drawn directly; each mount keeps the component it started with.
 */
export function lazyPage<P extends object>(load: () => Promise<ComponentType<P>>): LazyPage<P> {
  let loaded: ComponentType<P> | undefined;
  const fetch = () =>
    load().then((component) => {
      loaded = component;
    });
  const Lazy = lazy(() => fetch().then(() => ({ default: loaded as ComponentType<P> })));
  function Page(props: P) {
    const [component] = useState<ComponentType<P>>(() => loaded ?? Lazy);
    return createElement(component, props);
  }
  return { Page, fetch };
}
