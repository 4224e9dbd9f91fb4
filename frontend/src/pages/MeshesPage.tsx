import { useState } from "react";
import { Link, useLocation } from "react-router-dom";

import { psconfigDownloadUrl } from "../api/perfsonarQueries";
import { useMeshes, type Mesh } from "../api/queries";
import { MeshTestList } from "../components/MeshTestList";
import { Panel } from "../components/Panel";
import { LoadError, Loading } from "../components/QueryState";
import { useCan } from "../lib/roles";
import { noticeOf } from "./MeshEditorPage";
import { PsconfigImport } from "./perfsonar/PsconfigImport";
import "./mesh/mesh.css";

/** Who takes part, in a few words: "all agents", "3 agents", "2 A ↔ 3 B", "2 agents → 4 targets". */
export function membersCount(mesh: Mesh): string {
  const members = mesh.members ?? [];
  const agents = (count: number) => `${count} ${count === 1 ? "agent" : "agents"}`;
  if (mesh.kind === "disjoint") {
    const side = (name: string) => members.filter((member) => member.side === name).length;
    return `${side("a")} A ${mesh.unidirectional === true ? "→" : "↔"} ${side("b")} B`;
  }
  const who = mesh.all_agents === true ? "all agents" : agents(members.length);
  if (mesh.kind === "list") {
    const targets = (mesh.targets ?? []).length;
    return `${who} → ${targets} ${targets === 1 ? "target" : "targets"}`;
  }
  return who;
}

/** The mesh as a pSConfig template, for perfSONAR tools; marked when it is also published without sign-in. */
function PsconfigLink({ mesh }: { mesh: Mesh }) {
  return (
    <>
      <a href={psconfigDownloadUrl(mesh.name)} download={`${mesh.name}.json`} title={`Download ${mesh.name} as a pSConfig template`}>
        pSConfig
      </a>
      {mesh.psconfig_published === true && <span className="muted"> · published</span>}
    </>
  );
}

function MeshRow({ mesh }: { mesh: Mesh }) {
  const enabled = mesh.enabled !== false;
  return (
    <tr className={enabled ? undefined : "disabled"}>
      <td>
        <Link to={`/meshes/${encodeURIComponent(mesh.name)}`}>
          <strong>{mesh.name}</strong>
        </Link>
        {mesh.description !== undefined && mesh.description !== "" && <div className="muted">{mesh.description}</div>}
      </td>
      <td>{mesh.kind}</td>
      <td>{membersCount(mesh)}</td>
      <td>
        <MeshTestList tests={mesh.tests ?? []} />
      </td>
      <td>{enabled ? "yes" : <span className="flag">no: nothing runs</span>}</td>
      <td>
        <PsconfigLink mesh={mesh} />
      </td>
    </tr>
  );
}

/** /meshes: every mesh with who takes part and which tests at what interval. */
export function MeshesPage() {
  const meshes = useMeshes();
  const location = useLocation();
  const notice = noticeOf(location.state);
  // Operators and admins change meshes; viewers read them.
  const canEdit = useCan("operator");
  const [importing, setImporting] = useState(false);

  let body;
  if (meshes.isPending) {
    body = <Loading what="meshes" />;
  } else if (meshes.isError) {
    body = <LoadError what="meshes" error={meshes.error} />;
  } else if (meshes.data.length === 0) {
    body = (
      <p className="muted">
        No meshes, so no tests run.{" "}
        {canEdit ? "Create one with “New mesh”, or bring in perfSONAR meshes with “Import pSConfig”." : "An operator can create one."}
      </p>
    );
  } else {
    const rows = [...meshes.data].sort((a, b) => a.name.localeCompare(b.name));
    body = (
      <table>
        <thead>
          <tr>
            <th>Mesh</th>
            <th>Kind</th>
            <th>Members</th>
            <th>Tests</th>
            <th>Enabled</th>
            <th>Export</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((mesh) => (
            <MeshRow key={mesh.name} mesh={mesh} />
          ))}
        </tbody>
      </table>
    );
  }

  return (
    <section>
      <div className="mesh-heading">
        <h1>Meshes</h1>
        {canEdit && (
          <Link className="button" to="/meshes/new">
            New mesh
          </Link>
        )}
        {canEdit && !importing && (
          <button
            type="button"
            onClick={() => {
              setImporting(true);
            }}
          >
            Import pSConfig
          </button>
        )}
      </div>
      {canEdit && importing && (
        <Panel title="Import pSConfig">
          <PsconfigImport
            onClose={() => {
              setImporting(false);
            }}
          />
        </Panel>
      )}
      {notice !== null && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      <p className="muted">
        A mesh says which agents test to which, with which tests how often. Throughput tests hold both agents
        exclusively; the planner gives them slots (see Schedule).
      </p>
      {body}
    </section>
  );
}
