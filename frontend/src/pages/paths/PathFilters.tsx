import type { Choice } from "../../api/queries";
import { FAMILIES, familyLabel } from "../../lib/family";
import { NONE_VALUE, ONE_WAY_LOSS_LEVELS, type PathListView } from "../../lib/pathList";

export interface FilterOption {
  value: string;
  label: string;
}

/** A filter's options: the choices the server labels, then values only the data has. */
export function labelledOptions(
  values: readonly string[],
  choices: readonly Choice[] | undefined,
  noneLabel: string,
): FilterOption[] {
  const known = (choices ?? []).map((choice) => ({ value: choice.value, label: choice.label }));
  const extra = values
    .filter((value) => value !== NONE_VALUE && !known.some((option) => option.value === value))
    .map((value) => ({ value, label: value }));
  return [...known, ...extra, { value: NONE_VALUE, label: noneLabel }];
}

function Select({
  label,
  value,
  anyLabel,
  options,
  onChange,
}: {
  label: string;
  value: string | null;
  anyLabel: string;
  options: readonly FilterOption[];
  onChange: (value: string | null) => void;
}) {
  const listed = value === null || options.some((option) => option.value === value);
  return (
    <label>
      {label}{" "}
      <select
        value={value ?? ""}
        onChange={(event) => {
          onChange(event.target.value === "" ? null : event.target.value);
        }}
      >
        <option value="">{anyLabel}</option>
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
        {/* A value from a shared link that this list does not offer stays selectable. */}
        {!listed && <option value={value}>{value}</option>}
      </select>
    </label>
  );
}

/** The list's filters; each change is written to the URL by the page. */
export function PathFilters({
  view,
  meshes,
  diagnoses,
  statuses,
  onChange,
}: {
  view: PathListView;
  meshes: readonly string[];
  diagnoses: readonly FilterOption[];
  statuses: readonly FilterOption[];
  onChange: (change: Partial<PathListView>, replace?: boolean) => void;
}) {
  return (
    <div className="filters path-filters">
      <label>
        Agent{" "}
        <input
          type="search"
          value={view.text}
          placeholder="names, e.g. dca dcb"
          onChange={(event) => {
            // Typing replaces the history entry: Back should not step through every letter.
            onChange({ text: event.target.value }, true);
          }}
        />
      </label>
      <Select
        label="Mesh"
        value={view.mesh}
        anyLabel="every path"
        options={meshes.map((name) => ({ value: name, label: name }))}
        onChange={(mesh) => {
          onChange({ mesh });
        }}
      />
      <Select
        label="Family"
        value={view.family === null ? null : String(view.family)}
        anyLabel="IPv4 and IPv6"
        options={FAMILIES.map((family) => ({ value: String(family), label: familyLabel(family) }))}
        onChange={(family) => {
          onChange({ family: family === "6" ? 6 : family === "4" ? 4 : null });
        }}
      />
      <Select
        label="Limit"
        value={view.diagnosis}
        anyLabel="any"
        options={diagnoses}
        onChange={(diagnosis) => {
          onChange({ diagnosis });
        }}
      />
      <Select
        label="Last run"
        value={view.status}
        anyLabel="any"
        options={statuses}
        onChange={(status) => {
          onChange({ status });
        }}
      />
      <Select
        label="One-way loss"
        value={view.oneWayLoss}
        anyLabel="any"
        options={[
          ...ONE_WAY_LOSS_LEVELS.map(({ value, label }) => ({ value, label })),
          { value: NONE_VALUE, label: "no unloaded latency interval" },
        ]}
        onChange={(oneWayLoss) => {
          onChange({ oneWayLoss });
        }}
      />
      <label>
        <input
          type="checkbox"
          checked={view.openFindingsOnly}
          onChange={(event) => {
            onChange({ openFindingsOnly: event.target.checked });
          }}
        />{" "}
        open findings only
      </label>
    </div>
  );
}
