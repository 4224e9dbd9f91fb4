import type { Choice } from "../api/queries";
import { choiceFor } from "../lib/schedule";

/** A status as the server labels and colours it; the UI never hard-codes either. */
export function StatusBadge({ choice }: { choice: Choice }) {
  return (
    <span className="badge" style={{ backgroundColor: choice.color }} data-status={choice.value}>
      {choice.label}
    </span>
  );
}

/** A server-coloured badge, or the bare value when the choices do not list it (or have not loaded). */
export function ChoiceBadge({ choices, value }: { choices: readonly Choice[] | undefined; value: string }) {
  const choice = choiceFor(choices, value);
  return choice === null ? <span className="badge-plain">{value}</span> : <StatusBadge choice={choice} />;
}
