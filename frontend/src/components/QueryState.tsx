import { ApiError } from "../api/client";

/** Loading and error states that read the same on every page. */
export function Loading({ what }: { what: string }) {
  return (
    <p className="muted" role="status">
      Loading {what}…
    </p>
  );
}

export function LoadError({ what, error }: { what: string; error: Error }) {
  const detail = error instanceof ApiError ? error.message : "unexpected error";
  return (
    <p className="error" role="alert">
      Could not load {what}: {detail}.
    </p>
  );
}
