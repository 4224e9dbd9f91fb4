import { useId, type ReactNode } from "react";

import { FieldError } from "./FormErrors";

/** What a Field hands its input: the id its label points at, and the error/hint wiring. */
export interface FieldInputProps {
  id: string;
  "aria-invalid": boolean;
  "aria-describedby": string | undefined;
}

/**
 * One labelled form field: the label, the input (from `children`), a hint, and the
 * server's complaint about this field right beside it. The label names only the input;
 * hint and error are its description, so screen readers read them after the name.
 */
export function Field({
  label,
  error,
  hint,
  children,
}: {
  label: string;
  error?: string | undefined;
  hint?: string;
  children: (props: FieldInputProps) => ReactNode;
}) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const described = [hint === undefined ? null : hintId, error === undefined ? null : errorId].filter(
    (part): part is string => part !== null,
  );
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({
        id,
        "aria-invalid": error !== undefined,
        "aria-describedby": described.length === 0 ? undefined : described.join(" "),
      })}
      {hint !== undefined && (
        <span className="hint" id={hintId}>
          {hint}
        </span>
      )}
      <FieldError id={errorId} message={error} />
    </div>
  );
}
