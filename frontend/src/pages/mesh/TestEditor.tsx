import { testKindValues, testOptionsSchemas } from "../../api/contract";
import { withTestType, type TestDraft } from "../../lib/meshEditor";
import { COMMON_INTERVALS_S, formatInterval, secondsHint, type FieldErrors } from "../../lib/meshErrors";
import {
  boundsHint,
  defaultPlaceholder,
  optionFieldsOf,
  type OptionDraft,
  type OptionField,
} from "../../lib/meshOptions";
import { isTestKind, testKind } from "../../lib/testKinds";
import { CheckboxField, Field, TextField } from "../../components/Field";
import { FieldError } from "../../components/FormErrors";

/** The id of the <datalist> of common intervals the page renders once. */
export const INTERVALS_LIST_ID = "mesh-common-intervals";

export function CommonIntervals() {
  return (
    <datalist id={INTERVALS_LIST_ID}>
      {COMMON_INTERVALS_S.map((seconds) => (
        <option key={seconds} value={seconds} label={formatInterval(seconds)} />
      ))}
    </datalist>
  );
}

function kindDescription(testType: string): string {
  return isTestKind(testType) ? testOptionsSchemas[testType].description : "";
}

function OptionInput({
  field,
  value,
  error,
  onChange,
}: {
  field: OptionField;
  value: OptionDraft | undefined;
  error: string | undefined;
  onChange: (value: OptionDraft | undefined) => void;
}) {
  const bounds = boundsHint(field);
  const hint = (
    <>
      {field.description}
      {bounds !== "" && <> · {bounds}</>}
      {field.input !== "boolean" && field.default !== null && field.default !== "" && <> · default {String(field.default)}</>}
    </>
  );
  return (
    <Field label={field.name} hint={hint} error={error} quiet>
      {(control) => {
        switch (field.input) {
          case "boolean":
            return (
              <input
                {...control}
                type="checkbox"
                checked={typeof value === "boolean" ? value : field.default === true}
                onChange={(event) => {
                  onChange(event.target.checked);
                }}
              />
            );
          case "enum":
            return (
              <select
                {...control}
                value={typeof value === "string" ? value : ""}
                onChange={(event) => {
                  onChange(event.target.value === "" ? undefined : event.target.value);
                }}
              >
                <option value="">default ({defaultPlaceholder(field)})</option>
                {field.values.map((choice) => (
                  <option key={choice} value={choice}>
                    {choice}
                  </option>
                ))}
              </select>
            );
          case "integer":
          case "number":
            return (
              <input
                {...control}
                type="number"
                inputMode={field.input === "integer" ? "numeric" : "decimal"}
                step={field.input === "integer" ? 1 : "any"}
                {...(field.zeroAllowed ? { min: 0 } : field.minimum === null ? {} : { min: field.minimum })}
                {...(field.maximum === null ? {} : { max: field.maximum })}
                placeholder={defaultPlaceholder(field)}
                value={typeof value === "string" ? value : ""}
                onChange={(event) => {
                  onChange(event.target.value === "" ? undefined : event.target.value);
                }}
              />
            );
          case "string":
            return (
              <input
                {...control}
                type="text"
                placeholder={defaultPlaceholder(field)}
                value={typeof value === "string" ? value : ""}
                onChange={(event) => {
                  onChange(event.target.value === "" ? undefined : event.target.value);
                }}
              />
            );
        }
      }}
    </Field>
  );
}

/** One test of a mesh: what, how often, and its options as its kind's contract schema has them. */
export function TestEditor({
  test,
  index,
  errors,
  otherNames,
  canEdit,
  onChange,
  onRemove,
}: {
  test: TestDraft;
  index: number;
  errors: FieldErrors;
  otherNames: readonly string[];
  canEdit: boolean;
  onChange: (test: TestDraft) => void;
  onRemove: () => void;
}) {
  const path = `tests.${index}`;
  const error = (field: string) => errors[`${path}.${field}`];
  const fields = optionFieldsOf(test.test_type);
  const extra = Object.entries(test.extra);
  const title = test.name.trim() === "" ? testKind(test.test_type).label : test.name;

  const setOption = (name: string, value: OptionDraft | undefined) => {
    const options = Object.fromEntries(Object.entries(test.options).filter(([key]) => key !== name));
    onChange({ ...test, options: value === undefined ? options : { ...options, [name]: value } });
  };

  return (
    <fieldset className={test.enabled ? "test" : "test disabled"} aria-label={`Test ${title}`}>
      <legend>
        Test {index + 1}: {title}
        {!test.enabled && <span className="muted"> (disabled)</span>}
      </legend>
      <FieldError message={errors[path]} quiet />
      <TextField
        label="Test name"
        error={error("name")}
        hint="unique within the mesh; results name it"
        quiet
        type="text"
        value={test.name}
        onChange={(name) => {
          onChange({ ...test, name });
        }}
      />
      <Field label="Test type" error={error("test_type")} hint={kindDescription(test.test_type)} quiet>
        {(control) => (
          <select
            {...control}
            value={test.test_type}
            onChange={(event) => {
              onChange(withTestType(test, event.target.value, otherNames));
            }}
          >
            {!isTestKind(test.test_type) && <option value={test.test_type}>{test.test_type}</option>}
            {testKindValues.map((kind) => (
              <option key={kind} value={kind}>
                {testKind(kind).label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <TextField
        label="Interval (s)"
        error={error("interval_s")}
        hint={secondsHint(test.interval_s) || "seconds between runs"}
        quiet
        type="number"
        min={1}
        step={1}
        list={INTERVALS_LIST_ID}
        value={test.interval_s}
        onChange={(interval) => {
          onChange({ ...test, interval_s: interval });
        }}
      />
      <TextField
        label="Slip (s)"
        error={error("slip_s")}
        hint={
          (secondsHint(test.slip_s) === "" ? "" : `${secondsHint(test.slip_s)}; `) +
          "how late a run may start, so the planner can fit exclusive tests"
        }
        quiet
        type="number"
        min={0}
        step={1}
        placeholder="0"
        value={test.slip_s}
        onChange={(slip) => {
          onChange({ ...test, slip_s: slip });
        }}
      />
      <CheckboxField
        label="Test enabled"
        error={error("enabled")}
        quiet
        checked={test.enabled}
        onChange={(enabled) => {
          onChange({ ...test, enabled });
        }}
      />
      <fieldset className="options">
        <legend>Options</legend>
        <FieldError message={error("spec")} quiet />
        {fields.length === 0 && extra.length === 0 && <p className="muted">This test type has no options.</p>}
        {fields.length > 0 && <p className="hint muted">An empty option runs with its default.</p>}
        {fields.map((field) => (
          <OptionInput
            key={field.name}
            field={field}
            value={test.options[field.name]}
            error={error(`spec.${field.name}`)}
            onChange={(value) => {
              setOption(field.name, value);
            }}
          />
        ))}
        {extra.map(([name, value]) => (
          <div className="field" key={name}>
            <span>
              <code>{name}</code>
            </span>
            <div className="control">
              <code>{JSON.stringify(value)}</code>
              <span className="hint">an option this form has no field for, kept as written</span>
              {canEdit && (
                <button
                  type="button"
                  onClick={() => {
                    const rest = Object.fromEntries(Object.entries(test.extra).filter(([key]) => key !== name));
                    onChange({ ...test, extra: rest });
                  }}
                >
                  Remove option {name}
                </button>
              )}
              <FieldError message={error(`spec.${name}`)} quiet />
            </div>
          </div>
        ))}
      </fieldset>
      {canEdit && (
        <button type="button" onClick={onRemove}>
          Remove test {title}
        </button>
      )}
    </fieldset>
  );
}
