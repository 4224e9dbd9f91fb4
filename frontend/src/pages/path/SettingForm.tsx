// A number the user types to re-ask the server for the advice or the capacity plan.
import { useState, type SubmitEvent } from "react";

import type { ParsedInput } from "../../lib/analysis";

/** A number the user types to re-ask the server; blank means the server's default. */
export function SettingForm({
  label,
  unit,
  placeholder,
  parse,
  onApply,
}: {
  label: string;
  unit: string;
  placeholder: string;
  parse: (text: string) => ParsedInput;
  onApply: (value: number | null) => void;
}) {
  const [text, setText] = useState("");
  const [error, setError] = useState<string | null>(null);
  const submit = (event: SubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    const parsed = parse(text);
    if (parsed.ok) {
      setError(null);
      onApply(parsed.value);
    } else {
      setError(parsed.error);
    }
  };
  return (
    <form className="setting" onSubmit={submit}>
      <label>
        {label}{" "}
        <input
          type="number"
          step="any"
          min="0"
          value={text}
          placeholder={placeholder}
          onChange={(event) => {
            setText(event.target.value);
          }}
        />{" "}
        {unit}
      </label>{" "}
      <button type="submit">Apply</button>
      {error !== null && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}
