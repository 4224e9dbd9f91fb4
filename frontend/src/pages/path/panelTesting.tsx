// For the panels' tests: renders one analysis panel against a stubbed API, fed as
// PathAnalysisSection feeds it, from the shared path-analysis query and the server's choices;
// and an analysis with every value a panel could trip on unknown, null or empty.
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, screen } from "@testing-library/react";
import type { ReactNode } from "react";

import { useChoices, usePathAnalysis, type Choices, type PathAnalysis } from "../../api/queries";
import {
  ANALYSIS,
  CHOICES,
  DESTINATION,
  EMPTY_ANALYSIS,
  SOURCE,
  UNKNOWN_CEILINGS,
  UNKNOWN_INPUTS,
} from "../../test/analysisFixtures";
import { mockApi } from "../../test/mockApi";
import type { AnalysisQuery } from "./AnalysisState";

export const ANALYSIS_PATH = "/api/v1/analysis/path/";

/** A panel given the query and the choices, once they have loaded. */
export type PanelOf = (analysis: AnalysisQuery, choices: Choices | undefined) => ReactNode;

/** Renders `panel` with the analysis API answering `analysis` (a number: that error status). */
export function renderPanel(panel: PanelOf, analysis: unknown = ANALYSIS) {
  const fetchMock = mockApi({ "/api/v1/choices/": CHOICES, [ANALYSIS_PATH]: analysis });
  function Harness() {
    const query = usePathAnalysis(SOURCE.id, DESTINATION.id);
    const choices = useChoices();
    return panel(query, choices.data);
  }
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={queryClient}>
      <Harness />
    </QueryClientProvider>,
  );
  return fetchMock;
}

/** A panel by its title. */
export function panel(title: string): HTMLElement {
  return screen.getByRole("region", { name: title });
}

/** Every term unknown, a run without rate or evidence, a mode without a ceiling, RTT levels over time. */
export const UNKNOWN_ANALYSIS: PathAnalysis = {
  ...EMPTY_ANALYSIS,
  ceilings_now: { ...UNKNOWN_CEILINGS, inputs: UNKNOWN_INPUTS, options_of_run: "66666666-6666-4666-8666-666666666666" },
  runs: [
    {
      run_id: "66666666-6666-4666-8666-666666666666",
      started_at: "2026-11-22T12:00:00Z",
      streams: 4,
      rate_bps: null,
      ceiling_bps: null,
      fraction_of_ceiling: null,
      limit: "unknown",
      diagnosis: "unknown",
      evidence: {
        label: "unknown",
        rate_bps: null,
        ceiling_bps: null,
        winning_term: "unknown",
        fraction_of_ceiling: null,
        evidence: [],
        not_converged: false,
        binding_bps: null,
      },
      ceilings: UNKNOWN_CEILINGS,
      inputs: UNKNOWN_INPUTS,
      interval_stats: {
        steady_rate_bps: null,
        intervals: 0,
        window_limited_share: null,
        retransmits: null,
        retransmit_rate: null,
        omitted_retransmits: null,
        retransmit_bursts: 0,
        cwnd_collapses: 0,
        rate_cv: null,
        not_converged: false,
        pmtu_bytes: null,
      },
      iperf3_version: "",
    },
  ],
  modes: {
    ...EMPTY_ANALYSIS.modes,
    verdict: "single",
    modes: [
      { rtt_ms: 7.9, min_rtt_ms: 7.8, flow_count: 64, share: 1, src_ports: [], trace_path: [], ceiling: null },
    ],
    time_modes: {
      kind: "route_change",
      levels_ms: [7.9, 12.1],
      change_times: ["2026-11-22T09:30:00Z"],
      reason: "base RTT stepped once",
    },
  },
};
