import { useState, type ReactNode } from "react";

/** A button for a change that cannot be taken back: the first press asks, the second does it. */
export function ConfirmButton({
  label,
  question,
  confirmLabel,
  disabled = false,
  onConfirm,
}: {
  label: string;
  question: ReactNode;
  confirmLabel?: string;
  disabled?: boolean;
  onConfirm: () => void;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button
        type="button"
        disabled={disabled}
        onClick={() => {
          setAsking(true);
        }}
      >
        {label}
      </button>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={`Confirm: ${label}`}>
      <span>{question}</span>{" "}
      <button
        type="button"
        className="danger"
        disabled={disabled}
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        {confirmLabel ?? label}
      </button>{" "}
      <button
        type="button"
        onClick={() => {
          setAsking(false);
        }}
      >
        Cancel
      </button>
    </span>
  );
}
