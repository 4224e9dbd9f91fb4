import { memo, useMemo, type MouseEvent } from "react";
import { Link, useNavigate, useSearchParams } from "react-router-dom";

import { useChoices, useMeshGrid, useMeshes, type Mesh, type MeshGrid } from "../api/queries";
import { Panel } from "../components/Panel";
import { LoadError, Loading } from "../components/QueryState";
import {
  ECMP_VERDICT,
  GRID_METRICS,
  defaultMesh,
  familyGrid,
  gridTitle,
  gridView,
  parseMetric,
  toneLegend,
  type GridHalf,
  type GridMetric,
  type GridView,
  type Labels,
} from "../lib/grid";
import { FAMILIES, familyFromParams, familyLabel, type Family } from "../lib/family";
import { formatUtc } from "../lib/format";
import { useCan } from "../lib/roles";
import { ThresholdsForm } from "./grid/ThresholdsForm";

import "./grid/grid.css";

/** One direction of a cell: called as a function, not mounted as a component, so 19,800 of
 * them add no fibers. */
function halfLink(half: GridHalf | null, forward: boolean) {
  if (half === null) {
    return <span className="half tone-absent">{forward ? "not tested" : ""}</span>;
  }
  return (
    <a className={`half tone-${half.tone}`} href={half.href} data-cell={half.key}>
      <span className="dir">{forward ? "→" : "←"}</span>
      {half.text}
      {half.ecmp !== null && (
        <span
          className="ecmp-marker"
          data-testid="ecmp-marker"
          aria-label={half.ecmp.label}
          style={{ color: half.ecmp.color }}
        >
          ⇉
        </span>
      )}
      {half.findings > 0 && (
        <span
          className="finding-flag"
          aria-label={`${half.findings} open ${half.findings === 1 ? "finding" : "findings"}`}
        >
          !{half.findings > 1 ? half.findings : ""}
        </span>
      )}
    </a>
  );
}

/** The tooltip of the direction under the pointer or focus, built then: 19,800 of them up
 * front would cost more than the rest of the matrix. */
function showTitle(view: GridView, target: EventTarget) {
  const anchor = target instanceof Element ? target.closest<HTMLElement>("a.half") : null;
  if (anchor === null || anchor.dataset.titled === view.version) {
    return;
  }
  anchor.title = gridTitle(view, anchor.dataset.cell ?? "") ?? "";
  anchor.dataset.titled = view.version;
}

/** The matrix itself: plain anchors, no hook per cell, and one handler per event for the
 * table (in-app navigation, tooltips); memoised, so it redraws only with new data or metric. */
const GridTable = memo(function GridTable({ view }: { view: GridView }) {
  const navigate = useNavigate();
  const onClick = (event: MouseEvent<HTMLTableElement>) => {
    const anchor = (event.target as Element).closest("a.half");
    if (anchor === null || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) {
      return;
    }
    event.preventDefault();
    void navigate(anchor.getAttribute("href") ?? "/");
  };
  return (
    <div className="grid-scroll">
      <table
        className={`grid ${view.destinations.length > 20 ? "dense" : ""}`}
        onClick={onClick}
        onMouseOver={(event) => {
          showTitle(view, event.target);
        }}
        onFocus={(event) => {
          showTitle(view, event.target);
        }}
      >
        <thead>
          <tr>
            <th scope="col">source ↓ destination →</th>
            {view.destinations.map((agent) => (
              <th key={agent.id} scope="col">
                {agent.name}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {view.rows.map((row) => (
            <tr key={row.source.id}>
              <th scope="row">{row.source.name}</th>
              {row.squares.map((square) =>
                square.forward === null && square.reverse === null ? (
                  <td key={square.key} className="grid-cell none">
                    {square.key === row.source.id ? "" : "not tested"}
                  </td>
                ) : (
                  <td key={square.key} className="grid-cell">
                    {halfLink(square.forward, true)}
                    {halfLink(square.reverse, false)}
                  </td>
                ),
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
});

function GridLegend({ grid, metric, labels }: { grid: MeshGrid; metric: GridMetric; labels: Labels }) {
  const ecmp = labels.verdicts?.find((choice) => choice.value === ECMP_VERDICT);
  return (
    <p className="grid-legend muted">
      Rows send, columns receive: each cell shows row → column on top and column → row (←) under it, and opens
      the path page over the 24 h up to its newest data. <span className="finding-flag">!</span> open findings,{" "}
      <span className="ecmp-marker" style={ecmp === undefined ? undefined : { color: ecmp.color }}>
        ⇉
      </span>{" "}
      {ecmp?.label ?? "ECMP"}.{" "}
      {toneLegend(metric, grid.thresholds).map(([tone, words]) => (
        <span key={tone} className={`swatch tone-${tone}`}>
          {words}
        </span>
      ))}{" "}
      As of {formatUtc(grid.generated_at)}.
    </p>
  );
}

function NoPairs({ mesh, grid }: { mesh: string; grid: MeshGrid }) {
  const reason =
    grid.agents.length === 1
      ? `its only agent, ${grid.agents[0]?.name ?? ""}, has nobody to test with`
      : "it needs at least two active agents";
  return (
    <p className="muted">
      The mesh “{mesh}” has no pairs yet: {reason}. Add members to it on the <Link to="/meshes">Meshes</Link> page
      (or set <code>all_agents</code>), and enrol agents with <code>fathom-agent enroll</code>.
    </p>
  );
}

function MeshGridPanel({
  mesh,
  stored,
  metric,
  family,
  labels,
}: {
  mesh: string;
  stored: Mesh | undefined;
  metric: GridMetric;
  family: Family;
  labels: Labels;
}) {
  const grid = useMeshGrid(mesh);
  const canEdit = useCan("operator");
  const view = useMemo(
    () => (grid.data === undefined ? null : gridView(familyGrid(grid.data, family), metric, labels)),
    [grid.data, family, metric, labels],
  );
  if (grid.isError) {
    return <LoadError what={`the grid of ${mesh}`} error={grid.error} />;
  }
  if (grid.isPending || view === null) {
    return <Loading what={`the grid of ${mesh}`} />;
  }
  return (
    <>
      {canEdit && stored !== undefined && (
        <ThresholdsForm key={mesh} mesh={mesh} stored={stored.thresholds} effective={grid.data.thresholds} />
      )}
      {view.rows.length === 0 ? (
        <NoPairs mesh={mesh} grid={grid.data} />
      ) : (
        <>
          <GridLegend grid={grid.data} metric={metric} labels={labels} />
          <GridTable view={view} />
        </>
      )}
    </>
  );
}

/** A mesh as a matrix: every source -> destination, both ways, for one metric at a glance. */
export function GridPage() {
  const [params, setParams] = useSearchParams();
  const meshes = useMeshes();
  const choices = useChoices();
  const diagnoses = choices.data?.diagnosis;
  const verdicts = choices.data?.rtt_mode_verdict;
  const labels = useMemo<Labels>(() => ({ diagnoses, verdicts }), [diagnoses, verdicts]);
  const metric = parseMetric(params.get("metric"));
  const family = familyFromParams(params);

  const update = (key: string, value: string) => {
    const next = new URLSearchParams(params);
    next.set(key, value);
    setParams(next);
  };

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
        <div className="filters">
          <label>
            Mesh{" "}
            <select
              value={chosen}
              onChange={(event) => {
                update("mesh", event.target.value);
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
          </label>{" "}
          <label>
            Metric{" "}
            <select
              value={metric}
              onChange={(event) => {
                update("metric", event.target.value);
              }}
            >
              {GRID_METRICS.map((item) => (
                <option key={item.value} value={item.value}>
                  {item.label}
                </option>
              ))}
            </select>
          </label>{" "}
          <label>
            Family{" "}
            <select
              value={String(family)}
              onChange={(event) => {
                update("family", event.target.value);
              }}
            >
              {FAMILIES.map((item) => (
                <option key={item} value={String(item)}>
                  {familyLabel(item)}
                </option>
              ))}
            </select>
          </label>
        </div>
        <Panel title={`Mesh ${chosen}`}>
          <MeshGridPanel
            key={chosen}
            mesh={chosen}
            stored={meshes.data.find((mesh) => mesh.name === chosen)}
            metric={metric}
            family={family}
            labels={labels}
          />
        </Panel>
      </>
    );
  }

  return (
    <section>
      <h1>Grid</h1>
      <p className="muted">
        Each path of a mesh at a glance, for one metric and one address family (a dual-stack pair is an IPv4 and an
        IPv6 path): throughput against its ceiling (the lowest of what the link,
        the receive window, the send buffer and loss allow) or absolute, the RTT median and loss of the last hour, the
        one-way loss of each direction (latency tests), the RTT modes, or how the newest run went. Colours follow the mesh&apos;s thresholds.
      </p>
      {choices.isError && <LoadError what="the diagnosis labels" error={choices.error} />}
      {body}
    </section>
  );
}
