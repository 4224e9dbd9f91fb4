import type { ImportedMesh, ImportedNode, PsconfigImportReport } from "../../api/perfsonar";
import { testSchedule } from "../../lib/schedule";
import { testKind } from "../../lib/testKinds";
import "./perfsonar.css";

const MESH_ACTIONS: Record<ImportedMesh["action"], [planned: string, done: string]> = {
  create: ["to create", "created"],
  update: ["to update", "updated"],
  unchanged: ["unchanged", "unchanged"],
};

const NODE_ACTIONS: Record<ImportedNode["action"], [planned: string, done: string]> = {
  matched: ["matched", "matched"],
  register: ["to register as a perfSONAR node", "registered as a perfSONAR node"],
  unknown: ["unknown: left out", "unknown: left out"],
};

function actionWord(words: [string, string], dryRun: boolean): string {
  return dryRun ? words[0] : words[1];
}

function count<T extends { action: string }>(items: readonly T[], action: T["action"]): number {
  return items.filter((item) => item.action === action).length;
}

/** The report in one sentence: "2 meshes to create, 1 to update; 3 hosts matched, 1 unknown; 2 elements not mapped." */
export function reportSummary(report: PsconfigImportReport): string {
  const dry = report.dry_run;
  const meshes = (["create", "update", "unchanged"] as const)
    .map((action) => [count(report.meshes, action), actionWord(MESH_ACTIONS[action], dry)] as const)
    .filter(([n]) => n > 0)
    .map(([n, word]) => `${String(n)} ${word}`);
  const nodes = (["matched", "register", "unknown"] as const)
    .map((action) => [count(report.nodes, action), action === "register" ? (dry ? "to register" : "registered") : action] as const)
    .filter(([n]) => n > 0)
    .map(([n, word]) => `${String(n)} ${word}`);
  const parts = [
    report.meshes.length === 0 ? "no meshes" : `meshes: ${meshes.join(", ")}`,
    report.nodes.length === 0 ? "no hosts" : `hosts: ${nodes.join(", ")}`,
    report.unmapped.length === 0
      ? "every element mapped"
      : `${String(report.unmapped.length)} ${report.unmapped.length === 1 ? "element" : "elements"} not mapped`,
  ];
  return `${parts.join("; ")}.`;
}

function MeshesTable({ meshes, dryRun }: { meshes: readonly ImportedMesh[]; dryRun: boolean }) {
  if (meshes.length === 0) {
    return <p className="muted">The template yields no mesh: no task maps to a Fathom test.</p>;
  }
  return (
    <table>
      <thead>
        <tr>
          <th>Mesh</th>
          <th>Action</th>
          <th>Kind</th>
          <th>Members</th>
          <th>Targets</th>
          <th>Tests</th>
        </tr>
      </thead>
      <tbody>
        {meshes.map((mesh) => (
          <tr key={mesh.name}>
            <td>
              <strong>{mesh.name}</strong>
              {mesh.group !== mesh.name && (
                <span className="muted">
                  {" "}
                  from group <code>{mesh.group}</code>
                </span>
              )}
            </td>
            <td>
              <span className="import-action" data-action={mesh.action}>
                {actionWord(MESH_ACTIONS[mesh.action], dryRun)}
              </span>
            </td>
            <td>{mesh.kind}</td>
            <td>{mesh.members.length === 0 ? <span className="muted">none</span> : mesh.members.join(", ")}</td>
            <td>{mesh.targets.length === 0 ? <span className="muted">none</span> : mesh.targets.join(", ")}</td>
            <td>
              {mesh.tests.length === 0 ? (
                <span className="muted">no tests</span>
              ) : (
                <ul className="tests">
                  {mesh.tests.map((test) => (
                    <li key={test.name}>
                      <strong>{testKind(test.test_type).label}</strong> {testSchedule(test)}
                      {test.name !== test.test_type && <span className="muted"> ({test.name})</span>}
                      {!test.enabled && <span className="flag"> disabled</span>}
                    </li>
                  ))}
                </ul>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function NodesTable({ nodes, dryRun }: { nodes: readonly ImportedNode[]; dryRun: boolean }) {
  if (nodes.length === 0) {
    return <p className="muted">The template names no hosts.</p>;
  }
  return (
    <table>
      <thead>
        <tr>
          <th>Template address</th>
          <th>Host</th>
          <th>Address</th>
          <th>Fathom</th>
        </tr>
      </thead>
      <tbody>
        {nodes.map((node) => (
          <tr key={node.element}>
            <td>
              <code>{node.element}</code>
            </td>
            <td>{node.name}</td>
            <td>
              <code>{node.address}</code>
            </td>
            <td>
              <span className="import-action" data-action={node.action}>
                {actionWord(NODE_ACTIONS[node.action], dryRun)}
              </span>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Each address class and the template addresses it selected, as the groups that use it saw them. */
function AddressClasses({ classes }: { classes: PsconfigImportReport["address_classes"] }) {
  return (
    <table>
      <thead>
        <tr>
          <th>Class</th>
          <th>Selects</th>
          <th>Notes</th>
        </tr>
      </thead>
      <tbody>
        {classes.map((item) => (
          <tr key={item.element}>
            <td>
              <code>{item.name}</code>
            </td>
            <td>{item.selected.length === 0 ? <span className="muted">nothing</span> : item.selected.join(", ")}</td>
            <td>{item.notes.length === 0 ? <span className="muted">as pSConfig evaluates it</span> : item.notes.join(" ")}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** What an import did, or with a dry run would do: meshes, hosts, and every element that did not map, with why. */
export function ImportReport({ report }: { report: PsconfigImportReport }) {
  const unknownHosts = count(report.nodes, "unknown");
  return (
    <section className="import-report" aria-label="Import report">
      <h3>{report.dry_run ? "Dry run: nothing was changed" : "Imported"}</h3>
      <p role="status">{reportSummary(report)}</p>
      <h3>Meshes</h3>
      <MeshesTable meshes={report.meshes} dryRun={report.dry_run} />
      <h3>Hosts</h3>
      <NodesTable nodes={report.nodes} dryRun={report.dry_run} />
      {unknownHosts > 0 && (
        <p className="muted">
          Unknown hosts match no Fathom agent or perfSONAR node by address or name, and the tests to them are left out.
          Tick “Register unknown hosts as perfSONAR nodes” to add them, or add them on the Agents page first.
        </p>
      )}
      {report.address_classes.length > 0 && (
        <>
          <h3>Address classes</h3>
          <AddressClasses classes={report.address_classes} />
        </>
      )}
      <h3>Not mapped</h3>
      {report.unmapped.length === 0 ? (
        <p className="muted">Every element of the template mapped.</p>
      ) : (
        <ul className="unmapped">
          {report.unmapped.map((item, index) => (
            <li key={`${item.element}/${String(index)}`}>
              <code>{item.element}</code>: {item.reason}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
