import { useId, type ReactNode } from "react";

import { ErrorBoundary } from "./ErrorBoundary";

/** One titled part of a page that fails on its own: a broken panel leaves the others readable. */
export function Panel({ title, children }: { title: string; children: ReactNode }) {
  const headingId = useId();
  return (
    <section className="panel" aria-labelledby={headingId}>
      <h2 id={headingId}>{title}</h2>
      <ErrorBoundary what={`The “${title}” panel`}>{children}</ErrorBoundary>
    </section>
  );
}
