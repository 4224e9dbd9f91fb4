import { useRef } from "react";

import { psconfigDownloadUrl, psconfigPublicUrl, useSetPsconfigPublished } from "../../api/perfsonarQueries";
import type { Mesh } from "../../api/queries";
import { CheckboxField } from "../../components/Field";
import { CopyButton } from "../../components/CopyButton";
import { FormError } from "../../components/FormErrors";
import { splitErrors } from "../../lib/formErrors";
import "./perfsonar.css";

/** The mesh without its publishing switch: what the editor's form is about. */
export function withoutPublishing(mesh: Mesh): Mesh {
  const rest = { ...mesh };
  delete rest.psconfig_published;
  return rest;
}

/**
 * The mesh as a pSConfig template: a download, and (operators) the switch that serves it
 * without sign-in at /psconfig/<mesh>.json, where perfSONAR nodes subscribe to it. The switch
 * saves at once, apart from the form's other fields.
 */
export function PsconfigPublish({
  mesh,
  canEdit,
}: {
  mesh: Mesh;
  canEdit: boolean;
}) {
  const publish = useSetPsconfigPublished(mesh.name);
  const urlRef = useRef<HTMLElement>(null);
  const error = splitErrors(publish.error, ["psconfig_published"]);
  // While the change is on its way, the box shows what was asked for.
  const published = publish.isPending ? publish.variables : mesh.psconfig_published === true;
  const publicUrl = psconfigPublicUrl(mesh.name);
  return (
    <div className="psconfig-publish">
      <p>
        <a href={psconfigDownloadUrl(mesh.name)} download={`${mesh.name}.json`}>
          Download {mesh.name} as a pSConfig template
        </a>{" "}
        <span className="muted">(its archive points back at Fathom)</span>
      </p>
      <CheckboxField
        label="Publish as pSConfig template"
        error={error.fields.psconfig_published}
        hint="Anyone who can reach Fathom can read it, without signing in: it lists the members' addresses."
        checked={published}
        disabled={!canEdit || publish.isPending}
        onChange={(checked) => {
          publish.mutate(checked);
        }}
      />
      <FormError message={error.general} />
      {published && (
        <>
          <div className="secret-line">
            <code ref={urlRef}>{publicUrl}</code> <CopyButton text={publicUrl} target={urlRef} label="Copy URL" />
          </div>
          <p className="muted">
            On a perfSONAR node: <code>psconfig remote add --configure-archives {publicUrl}</code>
          </p>
        </>
      )}
    </div>
  );
}
