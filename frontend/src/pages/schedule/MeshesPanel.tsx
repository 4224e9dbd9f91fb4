// The meshes on the schedule page: who tests whom, and which tests at what interval.
import { Link } from "react-router-dom";

import { useMeshes, type Mesh } from "../../api/queries";
import { MeshTestList } from "../../components/MeshTestList";
import { LoadError, Loading } from "../../components/QueryState";
import { membersSummary } from "../../lib/schedule";

function MeshRow({ mesh }: { mesh: Mesh }) {
  const enabled = mesh.enabled !== false;
  return (
    <tr className={enabled ? undefined : "disabled"}>
      <td>
        <strong>{mesh.name}</strong>
        {mesh.description !== undefined && mesh.description !== "" && (
          <div className="muted">{mesh.description}</div>
        )}
      </td>
      <td>{mesh.kind}</td>
      <td>{membersSummary(mesh)}</td>
      <td>{enabled ? "yes" : "no: nothing runs"}</td>
      <td>
        <MeshTestList tests={mesh.tests ?? []} withOptions />
      </td>
    </tr>
  );
}

/** The meshes: who tests whom, and which tests at what interval. */
export function MeshesPanel() {
  const meshes = useMeshes();
  if (meshes.isPending) {
    return <Loading what="meshes" />;
  }
  if (meshes.isError) {
    return <LoadError what="meshes" error={meshes.error} />;
  }
  if (meshes.data.length === 0) {
    return (
      <p className="muted">
        No meshes, so no tests run. Operators create them on the <Link to="/meshes">Meshes</Link> page.
      </p>
    );
  }
  const rows = [...meshes.data].sort((a, b) => a.name.localeCompare(b.name));
  return (
    <table>
      <thead>
        <tr>
          <th>Mesh</th>
          <th>Kind</th>
          <th>Members</th>
          <th>Enabled</th>
          <th>Tests</th>
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

