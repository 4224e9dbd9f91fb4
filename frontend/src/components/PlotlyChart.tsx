// The one place that talks to Plotly. Plotly is large, so it is loaded on first use and
// the login and agent pages never download it.
import type { Config, Data, Layout, PlotMouseEvent, PlotRelayoutEvent } from "plotly.js";
import { useEffect, useRef, useState } from "react";

type PlotlyModule = typeof import("plotly.js-basic-dist-min");

let plotlyLoading: Promise<PlotlyModule> | null = null;

function loadPlotly(): Promise<PlotlyModule> {
  plotlyLoading ??= import("plotly.js-basic-dist-min");
  return plotlyLoading;
}

/**
 * Starts fetching Plotly when a page that will draw a chart mounts, just after its data
 * queries went out: waiting for the data first put the 380 KB download and its evaluation
 * after them (make bench-ui). A failed load is the chart's to show.
 */
export function usePlotlyAhead(): void {
  useEffect(() => {
    loadPlotly().catch(() => undefined);
  }, []);
}

const CONFIG: Partial<Config> = {
  responsive: true,
  displaylogo: false,
  modeBarButtonsToRemove: ["lasso2d", "select2d"],
  toImageButtonOptions: { format: "png", scale: 2 },
};

export interface PlotlyChartProps {
  data: Data[];
  layout: Partial<Layout>;
  /** Zoom and legend state survive refreshes until this changes (e.g. another range). */
  uiRevision: string;
  height?: number;
  testId?: string;
  /** Called when the user zooms or pans (Plotly's relayout event). */
  onRelayout?: (event: PlotRelayoutEvent) => void;
  /** Called when the user clicks a point (Plotly's click event). */
  onClick?: (event: PlotMouseEvent) => void;
}

export function PlotlyChart({ data, layout, uiRevision, height = 420, testId, onRelayout, onClick }: PlotlyChartProps) {
  const container = useRef<HTMLDivElement>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  // The newest callback, read by the one listener attached after the first draw.
  const relayout = useRef(onRelayout);
  const click = useRef(onClick);
  const listening = useRef(false);
  useEffect(() => {
    relayout.current = onRelayout;
    click.current = onClick;
  }, [onRelayout, onClick]);

  useEffect(() => {
    const element = container.current;
    if (element === null) {
      return;
    }
    let cancelled = false;
    loadPlotly()
      .then((plotly) => {
        if (!cancelled) {
          // react() diffs against the previous figure; with a stable uirevision a refresh
          // keeps the user's zoom instead of snapping back.
          return plotly.react(element, data, { ...layout, height, uirevision: uiRevision }, CONFIG).then((plot) => {
            if (!listening.current) {
              listening.current = true;
              plot.on("plotly_relayout", (event) => {
                relayout.current?.(event);
              });
              plot.on("plotly_click", (event) => {
                click.current?.(event);
              });
            }
            return plot;
          });
        }
        return undefined;
      })
      .catch((error: unknown) => {
        setLoadError(error instanceof Error ? error.message : String(error));
      });
    return () => {
      cancelled = true;
    };
  }, [data, layout, height, uiRevision]);

  useEffect(() => {
    const element = container.current;
    return () => {
      if (element !== null && plotlyLoading !== null) {
        void plotlyLoading.then((plotly) => {
          plotly.purge(element);
        });
      }
    };
  }, []);

  if (loadError !== null) {
    return <p className="error">The chart library failed to load: {loadError}</p>;
  }
  return <div ref={container} data-testid={testId} style={{ minHeight: height }} />;
}
