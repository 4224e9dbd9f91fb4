// Plotly does not run in jsdom: page tests replace PlotlyChart with this list of its trace
// names (vi.mock(".../components/PlotlyChart", () => import(".../test/plotlyChartStub"))).
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
