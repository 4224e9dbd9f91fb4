// The schedule as a Plotly timeline: one row per agent, one bar per slot on the row of each
// agent it holds (sender and receiver), coloured by the slot's state. A plain function of the
// API's slots, so the figure is tested without a browser.
import type { Data, Layout } from "plotly.js";

import type { Choice, Slot } from "../api/queries";
import { formatUtc } from "./format";
import { formatSpan, slotLengthS } from "./schedule";

/** Row height per agent; a 100-agent mesh is a long chart, not an unreadable one. */
const ROW_PX = 22;
const FRAME_PX = 110;
const MIN_HEIGHT_PX = 220;
const FALLBACK_COLOR = "#888888";

export interface TimelineFigure {
  data: Data[];
  layout: Partial<Layout>;
  height: number;
  /** The agents with a row, in row order. */
  agents: string[];
}

function hoverText(slot: Slot, role: "sends to" | "receives from", peer: string, label: string): string {
  const where = slot.mesh === null ? "" : `${slot.mesh}/${slot.test ?? "?"}<br>`;
  const reason = slot.reason === undefined || slot.reason === "" ? "" : `: ${slot.reason}`;
  return (
    `${role} ${peer}<br>${where}${formatUtc(slot.start_at)}, holds ${formatSpan(Math.round(slotLengthS(slot)))}` +
    `<br><b>${label}</b>${reason}`
  );
}

/** Rows sorted by name; slots grouped into one trace per state, in the server's state order. */
export function slotTimeline(slots: readonly Slot[], states: readonly Choice[] | undefined, now: Date): TimelineFigure {
  const agents = [...new Set(slots.flatMap((slot) => [slot.source_agent, slot.destination_agent]))].sort((a, b) =>
    a.localeCompare(b),
  );
  const order: string[] = (states ?? []).map((choice) => choice.value);
  const present = [...new Set(slots.map((slot) => slot.state as string))].sort(
    (a, b) => (order.indexOf(a) === -1 ? 99 : order.indexOf(a)) - (order.indexOf(b) === -1 ? 99 : order.indexOf(b)),
  );
  const data: Data[] = present.map((state) => {
    const choice = states?.find((item) => item.value === state);
    const label = choice?.label ?? state;
    const y: string[] = [];
    const base: string[] = [];
    const x: number[] = [];
    const text: string[] = [];
    for (const slot of slots) {
      if (slot.state !== state) {
        continue;
      }
      const lengthMs = Math.max(slotLengthS(slot) * 1000, 0);
      y.push(slot.source_agent, slot.destination_agent);
      base.push(slot.start_at, slot.start_at);
      x.push(lengthMs, lengthMs);
      text.push(
        hoverText(slot, "sends to", slot.destination_agent, label),
        hoverText(slot, "receives from", slot.source_agent, label),
      );
    }
    return {
      type: "bar",
      orientation: "h",
      name: label,
      y,
      x,
      base,
      hovertext: text,
      hoverinfo: "text",
      marker: { color: choice?.color ?? FALLBACK_COLOR },
      width: 0.7,
    } as Data;
  });
  const nowIso = now.toISOString();
  const height = Math.max(MIN_HEIGHT_PX, FRAME_PX + ROW_PX * agents.length);
  const layout: Partial<Layout> = {
    barmode: "overlay",
    margin: { l: 10, r: 10, t: 30, b: 40 },
    legend: { orientation: "h", y: 1.02, yanchor: "bottom", x: 0 },
    xaxis: { type: "date", title: { text: "UTC" } },
    yaxis: { type: "category", autorange: "reversed", automargin: true, categoryorder: "array", categoryarray: agents },
    shapes: [
      {
        type: "line",
        xref: "x",
        yref: "paper",
        x0: nowIso,
        x1: nowIso,
        y0: 0,
        y1: 1,
        line: { color: "#c0392b", dash: "dot", width: 1.5 },
      },
    ],
    annotations: [
      { x: nowIso, y: 1, xref: "x", yref: "paper", text: "now", showarrow: false, yanchor: "bottom", font: { size: 11 } },
    ],
  };
  return { data, layout, height, agents };
}
