import type { Choice } from "../api/queries";

/** A status as the server labels and colours it; the UI never hard-codes either. */
export function StatusBadge({ choice }: { choice: Choice }) {
  return (
    <span className="badge" style={{ backgroundColor: choice.color }} data-status={choice.value}>
      {choice.label}
    </span>
  );
}
