// The Paths list's view state and the work on it: which paths match the filters, in which
// order, and which page of them shows. All of it lives in the URL's search params, so a link
// reproduces the view; all of it is client-side over the whole list (9,900 paths sort in a
// few milliseconds), and only the visible page asks the server for sparklines.
import type { Family } from "./family";
import { formatMs, formatRate } from "./format";

/** The fields of a path summary (GET /analysis/paths/) the list sorts and filters by. */
export interface ListedPath {
  source: { id: string; name: string };
  destination: { id: string; name: string };
  /** 4 or 6: a dual-stack pair is two paths. */
  family: number;
  rtt_median_ms: number | null;
  loss_fraction: number | null;
  /** One-way loss of the last hour's latency tests, source → destination and the way back. */
  forward_loss_fraction: number | null;
  backward_loss_fraction: number | null;
  rate_bps: number | null;
  fraction_of_ceiling: number | null;
  diagnosis: string | null;
  limit: string | null;
  open_findings: number;
  data_age_s: number | null;
  last_run_status: string | null;
}

export const PAGE_SIZE = 100;

/**
 * Data older than this reads as stale: the meshes' default `stale_after_s` (the grid's), since
 * a path may belong to several meshes or none. Pings every minute keep a live path far below it.
 */
export const STALE_AFTER_S = 3600;

/** The value filters take for "nothing there" (no throughput analysed, no run yet). */
export const NONE_VALUE = "none";

/**
 * The one-way loss filter's levels: the meshes' default `loss_warn` and `loss_crit` (the grid's),
 * since a path may belong to several meshes or none. A path passes when either direction reaches it.
 */
export const ONE_WAY_LOSS_LEVELS = [
  { value: "warn", label: "≥ 0.1 % either way", atLeast: 0.001 },
  { value: "crit", label: "≥ 1 % either way", atLeast: 0.01 },
] as const;

export const SORT_KEYS = [
  "path",
  "rtt",
  "loss",
  "forward_loss",
  "backward_loss",
  "rate",
  "fraction",
  "limit",
  "findings",
  "age",
] as const;
export type SortKey = (typeof SORT_KEYS)[number];
export type SortDirection = "asc" | "desc";

/**
 * The direction a column sorts in when first chosen: the worst paths first (longest RTT, most
 * loss, furthest below the ceiling, most findings, oldest data); names and limits A to Z.
 */
const WORST_FIRST: Record<SortKey, SortDirection> = {
  path: "asc",
  rtt: "desc",
  loss: "desc",
  forward_loss: "desc",
  backward_loss: "desc",
  rate: "asc",
  fraction: "asc",
  limit: "asc",
  findings: "desc",
  age: "desc",
};

export interface PathListView {
  /** Words that must each appear in the source's or the destination's name. */
  text: string;
  /** Sent to the API as ?mesh=; null for every path. */
  mesh: string | null;
  /** 4 or 6: only that family's paths; null for both. */
  family: Family | null;
  openFindingsOnly: boolean;
  /** A diagnosis value, NONE_VALUE for paths without one, null for any. */
  diagnosis: string | null;
  /** A run status value, NONE_VALUE for paths without runs, null for any. */
  status: string | null;
  /** A level of ONE_WAY_LOSS_LEVELS, NONE_VALUE for paths without a latency test, null for any. */
  oneWayLoss: string | null;
  sort: SortKey;
  direction: SortDirection;
  /** 1-based; may exceed the page count (pagePaths clamps it). */
  page: number;
}

function isSortKey(value: string | null): value is SortKey {
  return SORT_KEYS.some((key) => key === value);
}

function emptyToNull(value: string | null): string | null {
  return value === null || value.trim() === "" ? null : value;
}

function oneWayLossFilter(value: string | null): string | null {
  return value === NONE_VALUE || ONE_WAY_LOSS_LEVELS.some((level) => level.value === value) ? value : null;
}

/** The view a URL describes; anything absent or malformed takes its default. */
export function parseView(params: URLSearchParams): PathListView {
  const sortParam = params.get("sort");
  const sort = isSortKey(sortParam) ? sortParam : "path";
  const dir = params.get("dir");
  const page = Number.parseInt(params.get("page") ?? "1", 10);
  return {
    text: params.get("q") ?? "",
    mesh: emptyToNull(params.get("mesh")),
    family: params.get("family") === "4" ? 4 : params.get("family") === "6" ? 6 : null,
    openFindingsOnly: params.get("findings") === "open",
    diagnosis: emptyToNull(params.get("diagnosis")),
    status: emptyToNull(params.get("status")),
    oneWayLoss: oneWayLossFilter(params.get("oneway")),
    sort,
    direction: dir === "asc" || dir === "desc" ? dir : WORST_FIRST[sort],
    page: Number.isFinite(page) && page >= 1 ? page : 1,
  };
}

/** The search params of a view: defaults left out, so the plain page keeps a plain URL. */
export function viewParams(view: PathListView): URLSearchParams {
  const params = new URLSearchParams();
  if (view.text.trim() !== "") {
    params.set("q", view.text);
  }
  if (view.mesh !== null) {
    params.set("mesh", view.mesh);
  }
  if (view.family !== null) {
    params.set("family", String(view.family));
  }
  if (view.openFindingsOnly) {
    params.set("findings", "open");
  }
  if (view.diagnosis !== null) {
    params.set("diagnosis", view.diagnosis);
  }
  if (view.status !== null) {
    params.set("status", view.status);
  }
  if (view.oneWayLoss !== null) {
    params.set("oneway", view.oneWayLoss);
  }
  if (view.sort !== "path") {
    params.set("sort", view.sort);
  }
  if (view.direction !== WORST_FIRST[view.sort]) {
    params.set("dir", view.direction);
  }
  if (view.page > 1) {
    params.set("page", String(view.page));
  }
  return params;
}

/** A click on a column: the same column flips its direction, another starts worst first. */
export function toggleSort(view: PathListView, key: SortKey): PathListView {
  const direction = view.sort === key ? (view.direction === "asc" ? "desc" : "asc") : WORST_FIRST[key];
  return { ...view, sort: key, direction, page: 1 };
}

/** Whether any filter narrows the list (the mesh does too: it changes what the server sends). */
export function isFiltered(view: PathListView): boolean {
  return (
    view.text.trim() !== "" ||
    view.mesh !== null ||
    view.family !== null ||
    view.openFindingsOnly ||
    view.diagnosis !== null ||
    view.status !== null ||
    view.oneWayLoss !== null
  );
}

/** Whether a path's one-way loss passes the filter's value (see PathListView.oneWayLoss). */
function passesOneWayLoss(path: ListedPath, filter: string): boolean {
  const { forward_loss_fraction: forward, backward_loss_fraction: backward } = path;
  if (filter === NONE_VALUE) {
    return forward === null && backward === null;
  }
  const level = ONE_WAY_LOSS_LEVELS.find((item) => item.value === filter);
  const worst = Math.max(forward ?? -1, backward ?? -1);
  return level !== undefined && worst >= level.atLeast;
}

/** The paths that pass the client-side filters (the mesh is the server's), in their order. */
export function filterPaths<T extends ListedPath>(paths: readonly T[], view: PathListView): T[] {
  const words = view.text.toLowerCase().split(/\s+/).filter((word) => word !== "");
  return paths.filter((path) => {
    if (view.family !== null && path.family !== view.family) {
      return false;
    }
    if (view.openFindingsOnly && path.open_findings <= 0) {
      return false;
    }
    if (view.diagnosis !== null && (path.diagnosis ?? NONE_VALUE) !== view.diagnosis) {
      return false;
    }
    if (view.status !== null && (path.last_run_status ?? NONE_VALUE) !== view.status) {
      return false;
    }
    if (view.oneWayLoss !== null && !passesOneWayLoss(path, view.oneWayLoss)) {
      return false;
    }
    if (words.length > 0) {
      const names = `${path.source.name}\n${path.destination.name}`.toLowerCase();
      return words.every((word) => names.includes(word));
    }
    return true;
  });
}

function pathName(path: ListedPath): string {
  return `${path.source.name}\u0000${path.destination.name}\u0000${String(path.family)}`;
}

/** The value a column sorts by; null sorts last in either direction (nothing to compare). */
function sortValue(path: ListedPath, key: SortKey): number | string | null {
  switch (key) {
    case "path":
      return pathName(path);
    case "rtt":
      return path.rtt_median_ms;
    case "loss":
      return path.loss_fraction;
    case "forward_loss":
      return path.forward_loss_fraction;
    case "backward_loss":
      return path.backward_loss_fraction;
    case "rate":
      return path.rate_bps;
    case "fraction":
      return path.fraction_of_ceiling;
    case "limit":
      return path.diagnosis === null ? null : `${path.diagnosis}\u0000${path.limit ?? ""}`;
    case "findings":
      return path.open_findings;
    case "age":
      return path.data_age_s;
  }
}

const collator = new Intl.Collator("en", { numeric: true, sensitivity: "base" });

function compareValues(a: number | string, b: number | string): number {
  return typeof a === "number" && typeof b === "number" ? a - b : collator.compare(String(a), String(b));
}

/** A sorted copy: by the column, unknown values last, ties by path name (A to Z). */
export function sortPaths<T extends ListedPath>(paths: readonly T[], key: SortKey, direction: SortDirection): T[] {
  const sign = direction === "asc" ? 1 : -1;
  const keyed = paths.map((path) => ({ path, value: sortValue(path, key), name: pathName(path) }));
  keyed.sort((a, b) => {
    if (a.value === null || b.value === null) {
      if (a.value !== b.value) {
        return a.value === null ? 1 : -1;
      }
    } else {
      const order = compareValues(a.value, b.value);
      if (order !== 0) {
        return sign * order;
      }
    }
    return collator.compare(a.name, b.name);
  });
  return keyed.map((item) => item.path);
}

export interface PathPage<T> {
  rows: T[];
  /** The page shown, 1-based, clamped to the pages there are. */
  page: number;
  pageCount: number;
  /** 1-based positions of the first and last row shown; 0 and 0 when there is none. */
  first: number;
  last: number;
  total: number;
}

/** One page of the list; a page past the end shows the last one. */
export function pagePaths<T>(paths: readonly T[], page: number, pageSize = PAGE_SIZE): PathPage<T> {
  const pageCount = Math.max(1, Math.ceil(paths.length / pageSize));
  const shown = Math.min(Math.max(1, Math.floor(page)), pageCount);
  const start = (shown - 1) * pageSize;
  const rows = paths.slice(start, start + pageSize);
  return {
    rows,
    page: shown,
    pageCount,
    first: rows.length === 0 ? 0 : start + 1,
    last: start + rows.length,
    total: paths.length,
  };
}

const counts = new Intl.NumberFormat("en");

/** "1–100 of 9,900", "0 of 0". */
export function pageRange(page: PathPage<unknown>): string {
  if (page.total === 0) {
    return "0 of 0";
  }
  return `${counts.format(page.first)}–${counts.format(page.last)} of ${counts.format(page.total)}`;
}

/** Whether a path's newest data is old enough to distrust its "current" values. */
export function isStale(path: Pick<ListedPath, "data_age_s">, staleAfterS = STALE_AFTER_S): boolean {
  return path.data_age_s !== null && path.data_age_s > staleAfterS;
}

/** The values present in the list for a field (e.g. every last status), sorted, for a filter's options. */
export function distinctValues<T>(paths: readonly T[], pick: (path: T) => string | null): string[] {
  const seen = new Set<string>();
  for (const path of paths) {
    seen.add(pick(path) ?? NONE_VALUE);
  }
  return [...seen].sort((a, b) => collator.compare(a, b));
}

/** The batch sparkline endpoint's `pair` value for a path (an IPv6 path's ends in ":6"). */
export function pairParam(path: { source: { id: string }; destination: { id: string }; family: number }): string {
  return `${path.source.id}:${path.destination.id}${path.family === 6 ? ":6" : ""}`;
}

/** The sparkline series of one path (GET /analysis/paths/spark/), as the batch endpoint sends them. */
export interface PathSparkData {
  rtt_p50_ms: readonly (number | null)[];
  runs: readonly { started_at: string; rate_bps: number | null; ceiling_bps: number | null }[];
}

/** Words for a sparkline's hover and screen readers: the range it spans and its newest value. */
export function rttSparkLabel(spark: PathSparkData): string {
  const values = spark.rtt_p50_ms.filter((value): value is number => value !== null && Number.isFinite(value));
  if (values.length === 0) {
    return "No RTT in the last 24 h";
  }
  const low = formatMs(Math.min(...values));
  const high = formatMs(Math.max(...values));
  return `RTT median hourly over 24 h: ${low === high ? low : `${low} to ${high}`}`;
}

export function runsSparkLabel(spark: PathSparkData): string {
  const newest = spark.runs.at(-1);
  if (newest === undefined) {
    return "No analysed throughput run in 31 days";
  }
  const runs = spark.runs.length === 1 ? "the newest run" : `the last ${String(spark.runs.length)} runs`;
  const rate = formatRate(newest.rate_bps);
  return `Throughput of ${runs} against the ceiling (dashed); newest ${rate} of ${formatRate(newest.ceiling_bps)}`;
}
