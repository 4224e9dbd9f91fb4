import { useState } from "react";
import { Link, useLocation, useNavigate, useParams } from "react-router-dom";

import { useMesh, type Mesh } from "../api/meshQueries";
import { useMe } from "../api/queries";
import { Panel } from "../components/Panel";
import { LoadError, Loading } from "../components/QueryState";
import { formatUtc } from "../lib/format";
import { useCan } from "../lib/roles";
import { DeleteMesh } from "./mesh/DeleteMesh";
import { HistoryPanel } from "./mesh/HistoryPanel";
import { MeshForm } from "./mesh/MeshForm";
import { PsconfigPublish, withoutPublishing } from "./perfsonar/PsconfigPublish";
import "./mesh/mesh.css";

/** The notice another page leaves in the navigation state ("Mesh saved"), if any. */
export function noticeOf(state: unknown): string | null {
  if (typeof state === "object" && state !== null && "notice" in state) {
    return typeof state.notice === "string" ? state.notice : null;
  }
  return null;
}

function meshUrl(name: string): string {
  return `/meshes/${encodeURIComponent(name)}`;
}

/** /meshes/new and /meshes/:name: the editor, with the mesh's history and deletion. */
export function MeshEditorPage() {
  const params = useParams();
  const name = params.name ?? null;
  const me = useMe();
  const mesh = useMesh(name);
  const location = useLocation();
  const navigate = useNavigate();
  // Bumped to rebuild the form from the server's mesh (after a save or a revert).
  const [revision, setRevision] = useState(0);
  const [loaded, setLoaded] = useState<{ key: string; mesh: Mesh } | null>(null);
  const notice = noticeOf(location.state);
  // Operators and admins change meshes; viewers read them.
  const canEdit = useCan("operator");
  const formKey = `${name ?? ""}:${revision}`;

  if (name !== null && mesh.isPending) {
    return <Loading what={`mesh ${name}`} />;
  }
  if (name !== null && mesh.isError) {
    return (
      <section>
        <p className="crumbs">
          <Link to="/meshes">Meshes</Link>
        </p>
        <LoadError what={`mesh ${name}`} error={mesh.error} />
      </section>
    );
  }
  const current = mesh.data ?? null;
  // The form keeps the mesh it was built from; a newer one from the server (someone else's
  // edit) is announced rather than pulled under the user's edits.
  if (current !== null && loaded?.key !== formKey) {
    setLoaded({ key: formKey, mesh: current });
  }
  // Publishing as pSConfig is saved on its own and shown live, so it is no change under the form.
  const changedElsewhere =
    current !== null &&
    loaded?.key === formKey &&
    JSON.stringify(withoutPublishing(loaded.mesh)) !== JSON.stringify(withoutPublishing(current));

  if (name === null && me.data !== undefined && !canEdit) {
    return (
      <section>
        <p className="crumbs">
          <Link to="/meshes">Meshes</Link>
        </p>
        <h1>New mesh</h1>
        <p>Creating a mesh needs the operator role; ask an admin.</p>
      </section>
    );
  }

  const onSaved = (saved: Mesh) => {
    setRevision((value) => value + 1);
    void navigate(meshUrl(saved.name), {
      replace: saved.name === name,
      state: { notice: `Mesh ${saved.name} saved at ${formatUtc(new Date().toISOString())}; its plan is updated.` },
    });
  };

  return (
    <section className="mesh-editor">
      <p className="crumbs">
        <Link to="/meshes">Meshes</Link> › {name ?? "new"}
      </p>
      <h1>{name === null ? "New mesh" : `Mesh ${name}`}</h1>
      {notice !== null && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      {!canEdit && me.data !== undefined && (
        <p className="muted">You can read this mesh; changing it needs the operator role.</p>
      )}
      {changedElsewhere && (
        <div className="warning" role="alert">
          This mesh changed on the server since the form was loaded.{" "}
          <button
            type="button"
            onClick={() => {
              setRevision((value) => value + 1);
            }}
          >
            Load the current version
          </button>{" "}
          <span className="muted">(discards the edits in the form)</span>
        </div>
      )}
      <MeshForm key={formKey} original={loaded?.key === formKey ? loaded.mesh : current} canEdit={canEdit} onSaved={onSaved} />
      {current !== null && (
        <Panel title="pSConfig">
          <PsconfigPublish mesh={current} canEdit={canEdit} />
        </Panel>
      )}
      {name !== null && (
        <Panel title="History">
          <HistoryPanel
            name={name}
            canEdit={canEdit}
            onReverted={(reverted, entry) => {
              setRevision((value) => value + 1);
              void navigate(meshUrl(reverted.name), {
                replace: true,
                state: { notice: `Reverted the ${entry.action} of ${formatUtc(entry.at)} by ${entry.actor_name}.` },
              });
            }}
          />
        </Panel>
      )}
      {name !== null && canEdit && (
        <Panel title="Delete">
          <DeleteMesh
            name={name}
            onDeleted={() => {
              void navigate("/meshes", { state: { notice: `Mesh ${name} deleted.` } });
            }}
          />
        </Panel>
      )}
    </section>
  );
}
