import { useEffect, useMemo, useState, type SyntheticEvent } from "react";

import { ApiError, flattenErrors } from "../../api/client";
import { useMeshPreview, useSaveMesh, type Mesh } from "../../api/meshQueries";
import { useAgents } from "../../api/queries";
import { Panel } from "../../components/Panel";
import { testKindValues } from "../../api/contract";
import {
  MESH_KINDS,
  draftFromMesh,
  listsMembers,
  meshPayload,
  newMeshDraft,
  newTestDraft,
  type MeshDraft,
  type MeshKind,
  type TestDraft,
} from "../../lib/meshEditor";
import { describePath, draftErrors, isPlacedError, targetErrors, type FieldErrors } from "../../lib/meshErrors";
import { testKind } from "../../lib/testKinds";
import { CheckboxField, Field, TextField } from "../../components/Field";
import { FieldError } from "../../components/FormErrors";
import { MembersField } from "./MembersField";
import { PlanPreviewView } from "./PlanPreviewPanel";
import { CommonIntervals, TestEditor } from "./TestEditor";

/** How long the form waits after the last edit before it asks for a new plan preview. */
export const PREVIEW_DEBOUNCE_MS = 600;

/** A refused preview or save as messages by field path; a body that is not JSON, as the error's sentence. */
function serverErrors(error: Error): FieldErrors {
  const body = error instanceof ApiError ? error.responseBody : null;
  if (body === null || typeof body !== "object") {
    return { "": error.message };
  }
  return flattenErrors(body);
}

function ErrorSummary({ errors, draft, title }: { errors: FieldErrors; draft: MeshDraft; title: string }) {
  const entries = Object.entries(errors);
  if (entries.length === 0) {
    return null;
  }
  const unplaced = entries.filter(([path]) => !isPlacedError(path, draft));
  const placed = entries.length - unplaced.length;
  return (
    <div className="warning" role="alert">
      <strong>{title}</strong>
      {placed > 0 && ` ${placed} ${placed === 1 ? "field is" : "fields are"} marked below.`}
      {unplaced.length > 0 && (
        <ul>
          {unplaced.map(([path, message]) => (
            <li key={path}>
              {path === "" ? message : `${describePath(path, draft)}: ${message}`}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/**
 * The mesh editor's form: what the mesh is, who takes part, which tests with which options,
 * and the plan it would yield, previewed as it is edited. Read-only for viewers.
 */
export function MeshForm({
  original,
  canEdit,
  onSaved,
}: {
  /** The mesh as loaded; null for a new one. */
  original: Mesh | null;
  canEdit: boolean;
  onSaved: (mesh: Mesh) => void;
}) {
  const [initial] = useState<MeshDraft>(() => (original === null ? newMeshDraft() : draftFromMesh(original)));
  const [draft, setDraft] = useState<MeshDraft>(initial);
  const [attempted, setAttempted] = useState(false);
  const [newTestType, setNewTestType] = useState<string>("ping");
  const agents = useAgents();
  const save = useSaveMesh(original?.name ?? null);

  const initialJson = useMemo(() => JSON.stringify(meshPayload(initial)), [initial]);
  const payload = useMemo(() => meshPayload(draft), [draft]);
  const payloadJson = JSON.stringify(payload);
  const dirty = original === null || payloadJson !== initialJson;
  const blocking = Object.keys(draftErrors(draft, true)).length > 0;

  // The preview follows the form, a moment after the last edit; the button asks at once.
  const [previewJson, setPreviewJson] = useState<string | null>(null);
  useEffect(() => {
    if (!canEdit || blocking) {
      return undefined;
    }
    const timer = setTimeout(() => {
      setPreviewJson(payloadJson);
    }, PREVIEW_DEBOUNCE_MS);
    return () => {
      clearTimeout(timer);
    };
  }, [canEdit, blocking, payloadJson]);
  const preview = useMeshPreview(previewJson, original?.name ?? null);
  const previewCurrent = previewJson === payloadJson && !preview.isPlaceholderData;

  // Server errors concern the mesh they were about: an edit since hides them until the next answer.
  const previewErrors = preview.isError && previewJson === payloadJson ? serverErrors(preview.error) : {};
  const saveErrors = save.isError && JSON.stringify(save.variables) === payloadJson ? serverErrors(save.error) : {};
  const fromServer = { ...previewErrors, ...saveErrors };
  const errors: FieldErrors = { ...draftErrors(draft, attempted), ...fromServer };
  const overbooked = preview.data?.ok === false;

  const update = (patch: Partial<MeshDraft>) => {
    setDraft((current) => ({ ...current, ...patch }));
  };
  const updateTest = (index: number, test: TestDraft) => {
    setDraft((current) => ({ ...current, tests: current.tests.map((item, at) => (at === index ? test : item)) }));
  };

  const askPreview = () => {
    setAttempted(true);
    if (blocking) {
      return;
    }
    if (previewJson === payloadJson) {
      void preview.refetch();
    } else {
      setPreviewJson(payloadJson);
    }
  };

  const onSubmit = (event: SyntheticEvent) => {
    event.preventDefault();
    setAttempted(true);
    if (!canEdit || blocking || overbooked) {
      return;
    }
    save.mutate(payload, { onSuccess: onSaved });
  };

  let saveBlocked: string | null = null;
  if (overbooked) {
    saveBlocked = "Save is disabled: the preview shows this change overbooks an agent.";
  } else if (!dirty) {
    saveBlocked = "No changes to save.";
  } else if (attempted && blocking) {
    saveBlocked = "Fix the fields marked above first.";
  }

  const kindHelp = MESH_KINDS.find((kind) => kind.value === draft.kind)?.help;
  const names = draft.tests.map((test) => test.name.trim());

  return (
    <form className="mesh-form" aria-label="Mesh" noValidate onSubmit={onSubmit}>
      <CommonIntervals />
      <ErrorSummary
        errors={fromServer}
        draft={draft}
        title={Object.keys(saveErrors).length > 0 ? "The server refused the mesh." : "The server finds problems with this mesh."}
      />
      <fieldset disabled={!canEdit}>
        <Panel title="Mesh">
          <TextField
            label="Mesh name"
            error={errors.name}
            hint="letters, digits, - and _; results and the plan name it"
            quiet
            type="text"
            className="wide"
            autoComplete="off"
            value={draft.name}
            onChange={(name) => {
              update({ name });
            }}
          />
          <TextField
            label="Description"
            error={errors.description}
            quiet
            type="text"
            className="wide"
            value={draft.description}
            onChange={(description) => {
              update({ description });
            }}
          />
          <Field label="Kind" error={errors.kind} hint={kindHelp} quiet>
            {(control) => (
              <select
                {...control}
                value={draft.kind}
                onChange={(event) => {
                  update({ kind: event.target.value as MeshKind });
                }}
              >
                {MESH_KINDS.map((kind) => (
                  <option key={kind.value} value={kind.value}>
                    {kind.label}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <CheckboxField
            label="Mesh enabled"
            error={errors.enabled}
            hint={draft.enabled ? undefined : "nothing of this mesh runs"}
            quiet
            checked={draft.enabled}
            onChange={(enabled) => {
              update({ enabled });
            }}
          />
          {draft.kind === "disjoint" && (
            <CheckboxField
              label="Unidirectional"
              error={errors.unidirectional}
              hint="A tests to B only, not B back to A"
              quiet
              checked={draft.unidirectional}
              onChange={(unidirectional) => {
                update({ unidirectional });
              }}
            />
          )}
          {draft.kind === "list" && (
            <Field
              label="Targets"
              error={targetErrors(errors, payload.targets ?? [])}
              hint="host names or IP addresses, one per line; every member tests to each"
              quiet
            >
              {(control) => (
                <textarea
                  {...control}
                  rows={4}
                  value={draft.targets}
                  onChange={(event) => {
                    update({ targets: event.target.value });
                  }}
                />
              )}
            </Field>
          )}
        </Panel>
        <Panel title="Members">
          {draft.kind !== "disjoint" && (
            <CheckboxField
              label="All agents"
              error={errors.all_agents}
              hint="every active agent takes part, and new agents join without an edit"
              quiet
              checked={draft.all_agents}
              onChange={(allAgents) => {
                update({ all_agents: allAgents });
              }}
            />
          )}
          {listsMembers(draft) ? (
            <MembersField
              draft={draft}
              agents={agents}
              errors={errors}
              canEdit={canEdit}
              onChange={(members) => {
                update({ members });
              }}
            />
          ) : (
            <FieldError message={errors.members} quiet />
          )}
        </Panel>
        <Panel title="Tests">
          <FieldError message={errors.tests} quiet />
          {draft.tests.length === 0 && <p className="muted">No tests: the mesh measures nothing until one is added.</p>}
          {draft.tests.map((test, index) => (
            <TestEditor
              key={test.key}
              test={test}
              index={index}
              errors={errors}
              otherNames={names.filter((_, other) => other !== index)}
              canEdit={canEdit}
              onChange={(next) => {
                updateTest(index, next);
              }}
              onRemove={() => {
                setDraft((current) => ({ ...current, tests: current.tests.filter((_, at) => at !== index) }));
              }}
            />
          ))}
          {canEdit && (
            <div className="toolbar">
              <label>
                Type of the new test{" "}
                <select
                  value={newTestType}
                  onChange={(event) => {
                    setNewTestType(event.target.value);
                  }}
                >
                  {testKindValues.map((kind) => (
                    <option key={kind} value={kind}>
                      {testKind(kind).label}
                    </option>
                  ))}
                </select>
              </label>
              <button
                type="button"
                onClick={() => {
                  setDraft((current) => ({
                    ...current,
                    tests: [...current.tests, newTestDraft(newTestType, current.tests.map((test) => test.name.trim()))],
                  }));
                }}
              >
                Add test
              </button>
            </div>
          )}
        </Panel>
      </fieldset>
      {canEdit && (
        <Panel title="Plan preview">
          <div className="toolbar">
            <button type="button" onClick={askPreview} disabled={preview.isFetching}>
              Preview plan
            </button>
            <span className="preview-status muted" role="status">
              {preview.isFetching
                ? "Asking the planner…"
                : blocking
                  ? "Fix the marked fields to preview the plan."
                  : previewCurrent && preview.data !== undefined
                    ? "Preview of the form as it is now."
                    : preview.data !== undefined
                      ? "The form changed since this preview; a new one follows."
                      : ""}
            </span>
          </div>
          {preview.data === undefined ? (
            !preview.isFetching && (
              <p className="muted">The preview shows each agent&apos;s exclusive slots and time budget with this mesh.</p>
            )
          ) : (
            <PlanPreviewView preview={preview.data} stale={!previewCurrent} />
          )}
        </Panel>
      )}
      {canEdit && (
        <div className="save-bar">
          <button type="submit" className="primary" disabled={save.isPending || overbooked || !dirty}>
            {save.isPending ? "Saving…" : "Save mesh"}
          </button>
          {dirty && original !== null && !save.isPending && <span className="muted">Unsaved changes.</span>}
          {saveBlocked !== null && <span className={overbooked ? "flag" : "muted"}>{saveBlocked}</span>}
        </div>
      )}
    </form>
  );
}
