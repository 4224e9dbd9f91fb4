import { useState, type ReactNode } from "react";

/**
 * A button for a change that cannot be taken back: the first press asks, the second does it.
 * When `onConfirm` returns a promise the question stays open while it runs (the confirm
 * button showing `busyLabel`), closes once it is done and stays open, for another try, when
 * it is refused: the caller shows why.
 */
export function ConfirmButton({
  label,
  question,
  confirmLabel,
  busyLabel,
  groupLabel,
  disabled = false,
  onAsk,
  onConfirm,
}: {
  label: string;
  question: ReactNode;
  confirmLabel?: string;
  busyLabel?: string;
  /** The name of the question's group; "Confirm: <label>" unless given. */
  groupLabel?: string;
  disabled?: boolean;
  onAsk?: () => void;
  /** What it returns matters only when it is a promise (see above). */
  onConfirm: () => unknown;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  if (!asking) {
    return (
      <button
        type="button"
        disabled={disabled}
        onClick={() => {
          onAsk?.();
          setAsking(true);
        }}
      >
        {label}
      </button>
    );
  }
  const confirm = () => {
    const running = onConfirm();
    if (!(running instanceof Promise)) {
      setAsking(false);
      return;
    }
    setBusy(true);
    void running
      .then(
        () => {
          setAsking(false);
        },
        () => undefined,
      )
      .finally(() => {
        setBusy(false);
      });
  };
  return (
    <span className="confirm" role="group" aria-label={groupLabel ?? `Confirm: ${label}`}>
      <span>{question}</span>{" "}
      <button type="button" className="danger" disabled={disabled || busy} onClick={confirm}>
        {busy ? (busyLabel ?? confirmLabel ?? label) : (confirmLabel ?? label)}
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
