// A mesh as a source x destination matrix: which pairs exist, and how each cell reads and
// is coloured (throughput as a share of its ceiling, loss, RTT modes, open findings).
import type { AgentRef, Choice, GridCell, Mesh, MeshGrid } from "../api/queries";
import { formatPercent, formatRate, formatUtc } from "./format";

export interface GridMatrix {
  /** Agents that send in at least one pair, in the server's order: the rows. */
  sources: AgentRef[];
  /** Agents that receive in at least one pair: the columns. */
  destinations: AgentRef[];
  cells: Map<string, GridCell>;
}

export function cellKey(sourceId: string, destinationId: string): string {
  return `${sourceId}>${destinationId}`;
}

/** Rows and columns from the response's agents, keeping only those that appear in a pair
 * (a disjoint mesh has senders that never receive). */
export function gridMatrix(grid: MeshGrid): GridMatrix {
  const cells = new Map<string, GridCell>();
  const sending = new Set<string>();
  const receiving = new Set<string>();
  for (const cell of grid.cells) {
    cells.set(cellKey(cell.source.id, cell.destination.id), cell);
    sending.add(cell.source.id);
    receiving.add(cell.destination.id);
  }
  return {
    sources: grid.agents.filter((agent) => sending.has(agent.id)),
    destinations: grid.agents.filter((agent) => receiving.has(agent.id)),
    cells,
  };
}

/** The rtt_mode_verdict value of a path whose flows take different RTTs (ECMP members). */
export const ECMP_VERDICT = "ecmp";

type Rgb = readonly [number, number, number];

/** Light tints so dark text stays readable on every cell. */
const CELL_COLORS = {
  low: [245, 183, 177],
  middle: [251, 216, 138],
  high: [168, 221, 181],
  unknown: [230, 233, 238],
} as const satisfies Record<string, Rgb>;

/** Below LOW the cell is fully red, from HIGH on fully green, amber half-way between. */
export const FRACTION_LOW = 0.5;
export const FRACTION_HIGH = 0.9;

function rgb([r, g, b]: Rgb): string {
  return `rgb(${r}, ${g}, ${b})`;
}

function mix(from: Rgb, to: Rgb, t: number): Rgb {
  const at = (i: 0 | 1 | 2) => Math.round(from[i] + (to[i] - from[i]) * t);
  return [at(0), at(1), at(2)];
}

/** Background of a cell: red under 50 % of the ceiling, through amber, to green from 90 %; grey when unknown. */
export function cellBackground(fraction: number | null | undefined): string {
  if (fraction === null || fraction === undefined || !Number.isFinite(fraction)) {
    return rgb(CELL_COLORS.unknown);
  }
  if (fraction <= FRACTION_LOW) {
    return rgb(CELL_COLORS.low);
  }
  if (fraction >= FRACTION_HIGH) {
    return rgb(CELL_COLORS.high);
  }
  const middle = (FRACTION_LOW + FRACTION_HIGH) / 2;
  if (fraction < middle) {
    return rgb(mix(CELL_COLORS.low, CELL_COLORS.middle, (fraction - FRACTION_LOW) / (middle - FRACTION_LOW)));
  }
  return rgb(mix(CELL_COLORS.middle, CELL_COLORS.high, (fraction - middle) / (FRACTION_HIGH - middle)));
}

/** Throughput as a whole percentage of its ceiling ("87 %"); above 100 % stays visible. */
export function formatCellFraction(fraction: number | null | undefined): string {
  if (fraction === null || fraction === undefined || !Number.isFinite(fraction)) {
    return "–";
  }
  return `${Math.round(fraction * 100)} %`;
}

export function formatModeCount(count: number | null | undefined): string {
  if (count === null || count === undefined) {
    return "no sweep";
  }
  return `${count} ${count === 1 ? "mode" : "modes"}`;
}

export function formatCellLoss(fraction: number | null | undefined): string {
  return fraction === null || fraction === undefined ? "loss –" : `loss ${formatPercent(fraction)}`;
}

/** The tooltip of a cell: the figures behind its colour, each labelled. */
export function cellTitle(cell: GridCell, diagnosis: Choice | null, verdict: Choice | null): string {
  const lines = [`${cell.source.name} → ${cell.destination.name}`];
  if (cell.rate_bps === null) {
    lines.push("no throughput run analysed yet");
  } else {
    const share = formatCellFraction(cell.fraction_of_ceiling);
    lines.push(`${formatRate(cell.rate_bps)} of a ${formatRate(cell.ceiling_bps)} ceiling (${share})`);
    lines.push(`diagnosis: ${diagnosis?.label ?? cell.diagnosis ?? "none"}, measured ${formatUtc(cell.measured_at)}`);
  }
  lines.push(
    cell.loss_fraction === null
      ? "no pings in the last hour"
      : `loss in the last hour: ${formatPercent(cell.loss_fraction)}`,
  );
  lines.push(
    cell.rtt_mode_verdict === null
      ? "no flow sweep yet"
      : `${formatModeCount(cell.mode_count)}: ${verdict?.label ?? cell.rtt_mode_verdict}`,
  );
  lines.push(`${cell.open_findings} open ${cell.open_findings === 1 ? "finding" : "findings"}`);
  return lines.join("\n");
}

/** The mesh the grid opens on: the first enabled one, else the first; null without meshes. */
export function defaultMesh(meshes: readonly Mesh[]): string | null {
  return (meshes.find((mesh) => mesh.enabled !== false) ?? meshes[0])?.name ?? null;
}
