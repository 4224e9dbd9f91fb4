import { useRef, useState } from "react";

import type { PsconfigImportRequest } from "../../api/perfsonar";
import { useImportPsconfig } from "../../api/perfsonarQueries";
import { CheckboxField, Field, TextField } from "../../components/Field";
import { FormError } from "../../components/FormErrors";
import { splitErrors } from "../../lib/formErrors";
import { ImportReport } from "./ImportReport";
import { parseTemplate, readFileText, type TemplateRead } from "./psconfigTemplate";
import "./perfsonar.css";

type Source = "file" | "url";

const IMPORT_FIELDS = ["template", "url", "register_unknown"] as const;

/** The file as the form holds it: its name and what reading it gave. */
interface ChosenFile {
  name: string;
  read: TemplateRead;
}

/**
 * Imports a pSConfig template (operators), from a file read here or a URL the server fetches:
 * "Dry run" reports what would change, "Import" changes it and reports the same way.
 */
export function PsconfigImport({ onClose }: { onClose: () => void }) {
  const [source, setSource] = useState<Source>("file");
  const [file, setFile] = useState<ChosenFile | null>(null);
  const [url, setUrl] = useState("");
  const [registerUnknown, setRegisterUnknown] = useState(false);
  const run = useImportPsconfig();
  // The file chosen last: a slower read of an earlier choice must not replace it.
  const latestFile = useRef<File | null>(null);
  const errors = splitErrors(run.error, IMPORT_FIELDS);

  // A report describes the inputs it was made for: any change makes it stale.
  const changed = () => {
    run.reset();
  };

  let request: Omit<PsconfigImportRequest, "dry_run"> | null = null;
  if (source === "file" && file?.read.ok === true) {
    request = { template: file.read.template, register_unknown: registerUnknown };
  } else if (source === "url" && url.trim() !== "") {
    request = { url: url.trim(), register_unknown: registerUnknown };
  }
  const submit = (dryRun: boolean) => {
    if (request !== null) {
      run.mutate({ ...request, dry_run: dryRun });
    }
  };
  const fileError = file?.read.ok === false ? file.read.error : errors.fields.template;

  return (
    <div>
      <form
        className="stacked-form"
        aria-label="Import pSConfig"
        onSubmit={(event) => {
          event.preventDefault();
          submit(true);
        }}
      >
        <fieldset className="psconfig-source" aria-label="Template from">
          {(["file", "url"] as const).map((option) => (
            <label key={option} className="toggle">
              <input
                type="radio"
                name="psconfig-source"
                value={option}
                checked={source === option}
                onChange={() => {
                  setSource(option);
                  changed();
                }}
              />{" "}
              {option === "file" ? "A file" : "A URL"}
            </label>
          ))}
        </fieldset>
        {source === "file" ? (
          <Field label="Template file" error={fileError} hint="a pSConfig template (JSON), read in this browser">
            {(props) => (
              <input
                {...props}
                type="file"
                accept=".json,application/json"
                onChange={(event) => {
                  changed();
                  const chosen = event.target.files?.[0] ?? null;
                  latestFile.current = chosen;
                  setFile(null);
                  if (chosen === null) {
                    return;
                  }
                  const settle = (read: TemplateRead) => {
                    if (latestFile.current === chosen) {
                      setFile({ name: chosen.name, read });
                    }
                  };
                  void readFileText(chosen).then(
                    (text) => {
                      settle(parseTemplate(text, chosen.name));
                    },
                    () => {
                      settle({ ok: false, error: `${chosen.name} could not be read.` });
                    },
                  );
                }}
              />
            )}
          </Field>
        ) : (
          <TextField
            label="Template URL"
            error={errors.fields.url}
            hint="The Fathom server fetches it, e.g. https://ps.example.net/psconfig/mesh.json"
            type="url"
            value={url}
            placeholder="https://ps.example.net/psconfig/mesh.json"
            onChange={(value) => {
              setUrl(value);
              changed();
            }}
          />
        )}
        <CheckboxField
          label="Register unknown hosts as perfSONAR nodes"
          error={errors.fields.register_unknown}
          hint="Otherwise hosts that match no agent or node by address or name are reported and left out."
          checked={registerUnknown}
          onChange={(checked) => {
            setRegisterUnknown(checked);
            changed();
          }}
        />
        <FormError message={errors.general} />
        <div className="buttons">
          <button type="submit" disabled={request === null || run.isPending}>
            {run.isPending && run.variables.dry_run ? "Checking…" : "Dry run"}
          </button>
          <button
            type="button"
            className="primary"
            disabled={request === null || run.isPending}
            onClick={() => {
              submit(false);
            }}
          >
            {run.isPending && !run.variables.dry_run ? "Importing…" : "Import"}
          </button>
          <button type="button" onClick={onClose}>
            Close
          </button>
        </div>
      </form>
      {run.data !== undefined && <ImportReport report={run.data} />}
    </div>
  );
}
