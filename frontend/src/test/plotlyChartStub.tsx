// Plotly does not run in jsdom: every UI test draws PlotlyChart as this list of its trace
// names (the mock is in src/test/setup.ts).
// The traces themselves are tested in the lib/*Traces, historyFigure, routes and
// slotTimeline tests.
import type { PlotlyChartProps } from "../components/PlotlyChart";

export function PlotlyChart({ data, testId }: PlotlyChartProps) {
  return (
    <ul data-testid={testId}>
      {data.map((trace, index) => (
        <li key={index}>{String(trace.name)}</li>
      ))}
    </ul>
  );
}

/** Nothing to fetch in jsdom. */
export function usePlotlyAhead(): void {
  // The stub draws no Plotly.
}
