import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";

import { ApiError, apiPatch } from "../../api/client";
import { queryKeys, type Mesh } from "../../api/queries";
import { Field } from "../../components/Field";
import { FormError } from "../../components/FormErrors";
import type { GridThresholds, StoredThresholds } from "../../lib/grid";
import {
  THRESHOLD_FIELDS,
  displayValue,
  formFromStored,
  storedFromForm,
  type ThresholdForm,
} from "../../lib/gridThresholds";

function useSaveThresholds(mesh: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (thresholds: StoredThresholds) =>
      apiPatch<Mesh>(`/meshes/${encodeURIComponent(mesh)}/`, { thresholds }),
    onSuccess: async () => {
      await Promise.all([
        client.invalidateQueries({ queryKey: queryKeys.meshGrid(mesh) }),
        client.invalidateQueries({ queryKey: queryKeys.meshes }),
      ]);
    },
  });
}

/** The mesh's grid thresholds, for operators: blank fields take the default, shown as the
 * placeholder (the value in force). The server checks ranges and order and saves nothing
 * when one is wrong. */
export function ThresholdsForm({
  mesh,
  stored,
  effective,
}: {
  mesh: string;
  stored: StoredThresholds | undefined;
  effective: GridThresholds;
}) {
  const [form, setForm] = useState<ThresholdForm>(() => formFromStored(stored));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [saved, setSaved] = useState(false);
  const save = useSaveThresholds(mesh);

  const submit = (thresholds: StoredThresholds) => {
    setSaved(false);
    save.mutate(thresholds, {
      onSuccess: () => {
        setErrors({});
        setSaved(true);
      },
      onError: (error) => {
        const fields = error instanceof ApiError ? error.fieldErrors : {};
        const mine: Record<string, string> = {};
        for (const [path, message] of Object.entries(fields)) {
          mine[path.replace(/^thresholds\.?/, "")] = message;
        }
        setErrors(Object.keys(mine).length > 0 ? mine : { "": error.message });
      },
    });
  };

  return (
    <details className="grid-thresholds">
      <summary>Thresholds</summary>
      <form
        aria-label={`Grid thresholds of ${mesh}`}
        onSubmit={(event) => {
          event.preventDefault();
          const parsed = storedFromForm(form);
          if (Object.keys(parsed.errors).length > 0) {
            setErrors(parsed.errors);
            return;
          }
          submit(parsed.thresholds);
        }}
      >
        <FormError message={errors[""] ?? null} />
        {THRESHOLD_FIELDS.map((field) => (
          <Field key={field.key} label={`${field.label} (${field.unit})`} error={errors[field.key]}>
            {(props) => (
              <input
                {...props}
                inputMode="decimal"
                value={form[field.key]}
                placeholder={displayValue(field, effective[field.key])}
                onChange={(event) => {
                  setForm({ ...form, [field.key]: event.target.value });
                }}
              />
            )}
          </Field>
        ))}
        <p className="muted">
          Blank: the default (shown greyed). Stale after defaults to 3 test intervals, at least 1 h.
        </p>
        <button type="submit" disabled={save.isPending}>
          Save thresholds
        </button>{" "}
        <button
          type="button"
          disabled={save.isPending}
          onClick={() => {
            setForm(formFromStored({}));
            submit({});
          }}
        >
          Reset to defaults
        </button>
        {saved && (
          <span className="muted" role="status">
            {" "}
            Saved.
          </span>
        )}
      </form>
    </details>
  );
}
