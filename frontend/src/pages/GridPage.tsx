import { Link, useSearchParams } from "react-router-dom";

import { useChoices, useMeshGrid, useMeshes, type Choice, type GridCell } from "../api/queries";
import { Panel } from "../components/Panel";
import { LoadError, Loading } from "../components/QueryState";
import {
  ECMP_VERDICT,
  FRACTION_HIGH,
  FRACTION_LOW,
  cellBackground,
  cellKey,
  cellTitle,
  defaultMesh,
  formatCellFraction,
  formatCellLoss,
  formatModeCount,
  gridMatrix,
} from "../lib/grid";
import { choiceFor } from "../lib/schedule";
import { pathHref } from "./PathsPage";

interface Labels {
  diagnoses: readonly Choice[] | undefined;
  verdicts: readonly Choice[] | undefined;
}

function Cell({ cell, labels }: { cell: GridCell; labels: Labels }) {
  const verdict = cell.rtt_mode_verdict === null ? null : choiceFor(labels.verdicts, cell.rtt_mode_verdict);
  const diagnosis = cell.diagnosis === null ? null : choiceFor(labels.diagnoses, cell.diagnosis);
  const ecmp = cell.rtt_mode_verdict === ECMP_VERDICT;
  return (
    <td className="grid-cell" style={{ backgroundColor: cellBackground(cell.fraction_of_ceiling) }}>
      <Link to={pathHref(cell.source.id, cell.destination.id)} title={cellTitle(cell, diagnosis, verdict)}>
        <span className="grid-fraction">
          {cell.rate_bps === null ? "no run" : formatCellFraction(cell.fraction_of_ceiling)}
        </span>
        <span className="grid-line">{formatCellLoss(cell.loss_fraction)}</span>
        <span className="grid-line">
          {formatModeCount(cell.mode_count)}
          {ecmp && (
            <span
              className="ecmp-marker"
              style={verdict === null ? undefined : { color: verdict.color }}
              aria-label={verdict?.label ?? cell.rtt_mode_verdict ?? undefined}
              data-testid="ecmp-marker"
            >
              {" "}
              ⇉
            </span>
          )}
        </span>
        <span className={cell.open_findings > 0 ? "grid-line flag" : "grid-line muted"}>
          {cell.open_findings} open
        </span>
      </Link>
    </td>
  );
}

function GridLegend({ verdicts }: { verdicts: readonly Choice[] | undefined }) {
  const ecmp = choiceFor(verdicts, ECMP_VERDICT);
  const swatches: [string, string][] = [
    [`under ${formatCellFraction(FRACTION_LOW)}`, cellBackground(FRACTION_LOW)],
    [formatCellFraction((FRACTION_LOW + FRACTION_HIGH) / 2), cellBackground((FRACTION_LOW + FRACTION_HIGH) / 2)],
    [`${formatCellFraction(FRACTION_HIGH)} or more`, cellBackground(FRACTION_HIGH)],
    ["unknown", cellBackground(null)],
  ];
  return (
    <p className="grid-legend muted">
      Each cell: the newest throughput run as a share of its ceiling{" "}
      {swatches.map(([label, color]) => (
        <span key={label} className="swatch" style={{ backgroundColor: color }}>
          {label}
        </span>
      ))}
      , loss over the last hour of pings, RTT modes of the newest flow sweep
      {ecmp !== null && (
        <>
          {" "}
          (<span style={{ color: ecmp.color }}>⇉</span> {ecmp.label})
        </>
      )}
      , and open findings. Rows send, columns receive; a cell opens its path.
    </p>
  );
}

function MeshGridPanel({ mesh, labels }: { mesh: string; labels: Labels }) {
  const grid = useMeshGrid(mesh);
  if (grid.isPending) {
    return <Loading what={`the grid of ${mesh}`} />;
  }
  if (grid.isError) {
    return <LoadError what={`the grid of ${mesh}`} error={grid.error} />;
  }
  const matrix = gridMatrix(grid.data);
  if (matrix.sources.length === 0) {
    return (
      <p className="muted">
        The mesh “{mesh}” has no pairs yet. It needs at least two active agents: add members to it, or set{" "}
        <code>all_agents</code>, and enrol agents with <code>fathom-agent enroll</code>.
      </p>
    );
  }
  return (
    <>
      <GridLegend verdicts={labels.verdicts} />
      <div className="grid-scroll">
        <table className="grid">
          <thead>
            <tr>
              <th scope="col">source ↓ destination →</th>
              {matrix.destinations.map((agent) => (
                <th key={agent.id} scope="col">
                  {agent.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {matrix.sources.map((source) => (
              <tr key={source.id}>
                <th scope="row">{source.name}</th>
                {matrix.destinations.map((destination) => {
                  const cell = matrix.cells.get(cellKey(source.id, destination.id));
                  if (cell === undefined) {
                    return (
                      <td key={destination.id} className="grid-cell none">
                        {source.id === destination.id ? "" : "not tested"}
                      </td>
                    );
                  }
                  return <Cell key={destination.id} cell={cell} labels={labels} />;
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** A mesh as a matrix: every source -> destination against its ceiling, at a glance. */
export function GridPage() {
  const [params, setParams] = useSearchParams();
  const meshes = useMeshes();
  const choices = useChoices();
  const labels: Labels = { diagnoses: choices.data?.diagnosis, verdicts: choices.data?.rtt_mode_verdict };

  let body;
  if (meshes.isPending) {
    body = <Loading what="meshes" />;
  } else if (meshes.isError) {
    body = <LoadError what="meshes" error={meshes.error} />;
  } else if (meshes.data.length === 0) {
    body = (
      <p className="muted">
        No meshes, so there is no grid. Operators create them on the <Link to="/meshes">Meshes</Link> page.
      </p>
    );
  } else {
    const names = meshes.data.map((mesh) => mesh.name);
    const chosen = params.get("mesh") ?? defaultMesh(meshes.data) ?? "";
    if (!names.includes(chosen)) {
      names.push(chosen);
    }
    body = (
      <>
        <label className="filters">
          Mesh{" "}
          <select
            value={chosen}
            onChange={(event) => {
              setParams({ mesh: event.target.value });
            }}
          >
            {names.map((name) => {
              const mesh = meshes.data.find((item) => item.name === name);
              return (
                <option key={name} value={name}>
                  {name}
                  {mesh?.enabled === false ? " (disabled)" : ""}
                </option>
              );
            })}
          </select>
        </label>
        <Panel title={`Mesh ${chosen}`}>
          <MeshGridPanel key={chosen} mesh={chosen} labels={labels} />
        </Panel>
      </>
    );
  }

  return (
    <section>
      <h1>Grid</h1>
      <p className="muted">
        How close each path of a mesh gets to its ceiling: the lowest of what the link, the receive window, the send
        buffer and loss allow.
      </p>
      {choices.isError && <LoadError what="the diagnosis labels" error={choices.error} />}
      {body}
    </section>
  );
}
