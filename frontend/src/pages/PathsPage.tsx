import { useMemo, type ReactNode } from "react";
import { useSearchParams } from "react-router-dom";

import { usePathList, type PathList } from "../api/pathListQueries";
import { useChoices, useMeshes } from "../api/queries";
import { ErrorBoundary } from "../components/ErrorBoundary";
import { LoadError, Loading } from "../components/QueryState";
import { formatUtc } from "../lib/format";
import {
  distinctValues,
  filterPaths,
  isFiltered,
  isStale,
  pagePaths,
  parseView,
  sortPaths,
  toggleSort,
  viewParams,
  type PathListView,
} from "../lib/pathList";
import { Pager } from "./paths/Pager";
import { PathFilters, labelledOptions } from "./paths/PathFilters";
import { PathTable, type PathLabels } from "./paths/PathTable";

import "./paths/paths.css";

export { pathHref } from "./paths/pathHref";

const counts = new Intl.NumberFormat("en");

function plural(count: number, one: string, many: string): string {
  return `${counts.format(count)} ${count === 1 ? one : many}`;
}

/** What the whole list holds, before the filters: the figures a NOC looks at first. */
function ListSummary({ list }: { list: PathList }) {
  const withFindings = list.paths.filter((path) => path.open_findings > 0).length;
  const stale = list.paths.filter((path) => isStale(path)).length;
  return (
    <p className="muted">
      {plural(list.paths.length, "path", "paths")}: {counts.format(withFindings)} with open findings,{" "}
      {counts.format(stale)} without data for over an hour. RTT and loss are of the last hour (one-way loss from
      latency tests), throughput of the newest analysed run; as of {formatUtc(list.generated_at)}.
    </p>
  );
}

function AgentPaths({
  list,
  view,
  labels,
  dimmed,
  update,
}: {
  list: PathList;
  view: PathListView;
  labels: PathLabels;
  dimmed: boolean;
  update: (change: Partial<PathListView>, replace?: boolean) => void;
}) {
  const shown = useMemo(
    () => sortPaths(filterPaths(list.paths, view), view.sort, view.direction),
    [list.paths, view],
  );
  const page = pagePaths(shown, view.page);
  if (list.paths.length === 0) {
    return view.mesh === null ? (
      <p className="muted" data-testid="paths-empty">
        No measurements yet. Enrolled agents start probing each other within a minute of seeing their plan.
      </p>
    ) : (
      <p className="muted" data-testid="paths-empty">
        No path of the mesh “{view.mesh}” has results yet: its agents start testing within a minute of seeing their
        plan. Choose “every path” to see the others.
      </p>
    );
  }
  if (shown.length === 0) {
    return (
      <p className="muted" data-testid="paths-no-match">
        No path matches these filters.{" "}
        <button
          type="button"
          className="link"
          onClick={() => {
            update({ text: "", openFindingsOnly: false, diagnosis: null, status: null, oneWayLoss: null });
          }}
        >
          Clear the filters
        </button>{" "}
        (the mesh stays).
      </p>
    );
  }
  const onPage = (next: number) => {
    update({ page: next });
  };
  return (
    <>
      <Pager page={page} onPage={onPage} filtered={isFiltered({ ...view, mesh: null })} />
      <PathTable
        rows={page.rows}
        view={view}
        labels={labels}
        generatedAt={new Date(list.generated_at)}
        dimmed={dimmed}
        onSort={(key) => {
          update(toggleSort(view, key));
        }}
      />
      {page.pageCount > 1 && <Pager page={page} onPage={onPage} filtered={false} />}
    </>
  );
}

/**
 * Every measured path with what a NOC scans for: RTT and loss now, the last throughput against
 * its ceiling and what limits it, open findings, how old the data is, and a day's trend.
 * Sorting, filters and the page are in the URL, so a link shows the same view.
 *
 * `externalTargets` is the slot below the agent paths for the external targets' table (list
 * meshes' targets without an agent), which App.tsx passes in.
 */
export function PathsPage({ externalTargets }: { externalTargets?: ReactNode }) {
  const [params, setParams] = useSearchParams();
  const view = parseView(params);
  const list = usePathList(view.mesh);
  const meshes = useMeshes();
  const choices = useChoices();
  const labels = useMemo<PathLabels>(
    () => ({ diagnoses: choices.data?.diagnosis, statuses: choices.data?.run_status }),
    [choices.data],
  );

  /** A filter change starts again from page 1; a sort or page change says so itself. */
  const update = (change: Partial<PathListView>, replace = false) => {
    const next: PathListView = { ...view, page: 1, ...change };
    setParams(viewParams(next), { replace });
  };

  const paths = list.data?.paths ?? [];
  const meshNames = (meshes.data ?? []).map((mesh) => mesh.name).sort((a, b) => a.localeCompare(b));
  const diagnosisOptions = labelledOptions(
    distinctValues(paths, (path) => path.diagnosis),
    labels.diagnoses,
    "not measured",
  );
  const statusOptions = labelledOptions(
    distinctValues(paths, (path) => path.last_run_status),
    labels.statuses?.filter((choice) => paths.some((path) => path.last_run_status === choice.value)),
    "no run",
  );

  let body;
  if (list.isError) {
    body = (
      <>
        <LoadError
          what={view.mesh === null ? "the paths" : `the paths of the mesh “${view.mesh}”`}
          error={list.error}
        />
        {view.mesh !== null && (
          <button
            type="button"
            className="link"
            onClick={() => {
              update({ mesh: null });
            }}
          >
            Show every path
          </button>
        )}
      </>
    );
  } else if (list.isPending) {
    body = <Loading what="paths" />;
  } else {
    body = (
      <>
        <ListSummary list={list.data} />
        <AgentPaths
          list={list.data}
          view={view}
          labels={labels}
          dimmed={list.isPlaceholderData}
          update={update}
        />
      </>
    );
  }

  return (
    <section>
      <h1>Paths</h1>
      <PathFilters
        view={view}
        meshes={meshNames}
        diagnoses={diagnosisOptions}
        statuses={statusOptions}
        onChange={update}
      />
      {meshes.isError && <LoadError what="the meshes" error={meshes.error} />}
      {choices.isError && <LoadError what="the labels" error={choices.error} />}
      <ErrorBoundary what="The paths table">{body}</ErrorBoundary>
      {/* Slot: the external targets' table renders here, below the agent paths, on its own. */}
      {externalTargets !== undefined && <ErrorBoundary what="The external targets">{externalTargets}</ErrorBoundary>}
    </section>
  );
}
