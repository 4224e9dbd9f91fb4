import { useId, type ReactNode } from "react";

/** What a field's input needs to be labelled and to point at its hint and error. */
export interface ControlProps {
  id: string;
  "aria-describedby"?: string;
  "aria-invalid"?: true;
}

/**
 * One labelled input with its hint and its error beside it: the error may be the form's own
 * check or the server's, whichever names this field.
 */
export function Field({
  label,
  hint,
  error,
  children,
}: {
  label: string;
  hint?: ReactNode;
  error?: string | undefined;
  children: (control: ControlProps) => ReactNode;
}) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const described = [hint === undefined ? null : hintId, error === undefined ? null : errorId].filter(
    (part) => part !== null,
  );
  const control: ControlProps = {
    id,
    ...(described.length > 0 ? { "aria-describedby": described.join(" ") } : {}),
    ...(error === undefined ? {} : { "aria-invalid": true as const }),
  };
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <div className="control">
        {children(control)}
        {hint !== undefined && (
          <span id={hintId} className="hint">
            {hint}
          </span>
        )}
        {error !== undefined && <FieldError id={errorId} message={error} />}
      </div>
    </div>
  );
}

export function FieldError({ id, message }: { id?: string; message: string | undefined }) {
  if (message === undefined) {
    return null;
  }
  return (
    <span id={id} className="field-error">
      {message}
    </span>
  );
}
