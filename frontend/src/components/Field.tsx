import { useId, type InputHTMLAttributes, type ReactNode } from "react";

import { FieldError } from "./FormErrors";

/** What a Field hands its input: the id its label points at, and the error/hint wiring. */
export interface FieldInputProps {
  id: string;
  "aria-describedby"?: string;
  "aria-invalid"?: true;
}

export interface FieldProps {
  label: string;
  /** The complaint about this field: the form's own check or the server's. */
  error?: string | undefined;
  hint?: ReactNode;
  /** The error follows the typing (a form that checks as it goes): see FieldError. */
  quiet?: boolean | undefined;
}

/**
 * One labelled form field: the label, the input (from `children`), a hint, and the
 * complaint about this field right beside it. The label names only the input; hint and
 * error are its description, so screen readers read them after the name.
 */
export function Field({ label, error, hint, quiet, children }: FieldProps & { children: (props: FieldInputProps) => ReactNode }) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const described = [hint === undefined ? null : hintId, error === undefined ? null : errorId].filter(
    (part) => part !== null,
  );
  const props: FieldInputProps = {
    id,
    ...(described.length > 0 ? { "aria-describedby": described.join(" ") } : {}),
    ...(error === undefined ? {} : { "aria-invalid": true as const }),
  };
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <div className="control">
        {children(props)}
        {hint !== undefined && (
          <span className="hint" id={hintId}>
            {hint}
          </span>
        )}
        <FieldError id={errorId} message={error} quiet={quiet} />
      </div>
    </div>
  );
}

/** The attributes an input of a TextField or CheckboxField may take besides its value. */
type InputAttributes = Omit<
  InputHTMLAttributes<HTMLInputElement>,
  "id" | "value" | "checked" | "onChange" | "children" | "aria-describedby" | "aria-invalid"
>;

/** A Field whose input holds a string: text, a number as typed, a password, a date. */
export function TextField({
  label,
  error,
  hint,
  quiet,
  value,
  onChange,
  ...input
}: FieldProps & InputAttributes & { value: string; onChange: (value: string) => void }) {
  return (
    <Field label={label} error={error} hint={hint} quiet={quiet}>
      {(props) => (
        <input
          {...input}
          {...props}
          value={value}
          onChange={(event) => {
            onChange(event.target.value);
          }}
        />
      )}
    </Field>
  );
}

/** A Field whose input is one checkbox. */
export function CheckboxField({
  label,
  error,
  hint,
  quiet,
  checked,
  onChange,
  ...input
}: FieldProps & Omit<InputAttributes, "type"> & { checked: boolean; onChange: (checked: boolean) => void }) {
  return (
    <Field label={label} error={error} hint={hint} quiet={quiet}>
      {(props) => (
        <input
          {...input}
          {...props}
          type="checkbox"
          checked={checked}
          onChange={(event) => {
            onChange(event.target.checked);
          }}
        />
      )}
    </Field>
  );
}
