// A zoom or pan on a history chart is the new range, in the URL; a double click (autorange) goes
// back to the named range. Shared by the path's and the target's history charts.
import { useCallback } from "react";
import type { PlotRelayoutEvent } from "plotly.js";
import { useSearchParams } from "react-router-dom";

import { explicitRangeParams, namedRangeParams } from "./historyRange";

export function useRangeZoom(rangeKey: string | null): (event: PlotRelayoutEvent) => void {
  const [params, setParams] = useSearchParams();
  return useCallback(
    (event: PlotRelayoutEvent) => {
      const start = event["xaxis.range[0]"];
      const end = event["xaxis.range[1]"];
      if (start !== undefined && end !== undefined) {
        const from = new Date(`${String(start).replace(" ", "T")}Z`);
        const to = new Date(`${String(end).replace(" ", "T")}Z`);
        if (!Number.isNaN(from.getTime()) && !Number.isNaN(to.getTime()) && from < to) {
          setParams(explicitRangeParams(params, from, to), { replace: true });
        }
      } else if (event["xaxis.autorange"] === true && rangeKey === null) {
        setParams(namedRangeParams(params, params.get("range") ?? "24h"));
      }
    },
    [params, setParams, rangeKey],
  );
}
