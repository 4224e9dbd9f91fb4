// The external targets of the list meshes (host names or addresses with no agent there), one
// row per agent -> target path: its tests, the last hour's RTT and loss, the newest run and its
// age, each row linking to the target's page. Rendered on the Paths page below the agent paths.
import { useMemo, useState } from "react";
import { Link } from "react-router-dom";

import { useChoices, useMeshes } from "../../api/queries";
import { useTargets, type TargetPath } from "../../api/targetQueries";
import { LoadError, Loading } from "../../components/QueryState";
import { ChoiceBadge } from "../../components/StatusBadge";
import { formatAgo, formatMs, formatPercent, formatUtc } from "../../lib/format";
import { filterTargets, meshesByTarget, normalizeTarget, targetHref } from "../../lib/targets";
import { testKind } from "../../lib/testKinds";

function TargetRow({
  row,
  meshes,
  statuses,
  now,
}: {
  row: TargetPath;
  meshes: readonly string[];
  statuses: Parameters<typeof ChoiceBadge>[0]["choices"];
  now: Date;
}) {
  return (
    <tr>
      <td>
        <Link to={targetHref(row.source.id, row.target)}>
          {row.source.name} → {row.target}
        </Link>
        {meshes.length > 0 && <div className="muted">{meshes.join(", ")}</div>}
      </td>
      <td>{row.test_types.map((type) => testKind(type).label).join(", ")}</td>
      <td className="number">{formatMs(row.rtt_median_ms)}</td>
      <td className="number">
        {row.sent_last_hour === 0 ? <span className="muted">no pings</span> : formatPercent(row.loss_fraction)}
      </td>
      <td>
        <ChoiceBadge choices={statuses} value={row.last_status} />{" "}
        <span className="muted">{testKind(row.last_run_test_type).label}</span>
      </td>
      <td className="nowrap" title={formatUtc(row.last_run_at)}>
        {formatAgo(row.last_run_at, now)}
      </td>
    </tr>
  );
}

/** Every agent -> external target path with runs; nothing to show says how to get some. */
export function TargetsTable() {
  const targets = useTargets();
  const meshes = useMeshes();
  const choices = useChoices();
  const [query, setQuery] = useState("");
  const named = useMemo(() => meshesByTarget(meshes.data ?? []), [meshes.data]);
  const rows = useMemo(() => filterTargets(targets.data?.targets ?? [], query), [targets.data, query]);

  let body;
  if (targets.isPending) {
    body = <Loading what="the external targets" />;
  } else if (targets.isError) {
    body = <LoadError what="the external targets" error={targets.error} />;
  } else if (targets.data.targets.length === 0) {
    body = (
      <p className="muted" data-testid="targets-empty">
        No external targets measured yet. A list mesh (Meshes page) has its agents probe host names or addresses
        without an agent; their results show here within a test interval.
      </p>
    );
  } else {
    const now = new Date(targets.data.generated_at);
    body = (
      <>
        <div className="filters">
          <label>
            Filter{" "}
            <input
              type="search"
              value={query}
              placeholder="agent, target or test"
              onChange={(event) => {
                setQuery(event.target.value);
              }}
            />
          </label>
        </div>
        {rows.length === 0 ? (
          <p className="muted" data-testid="targets-no-match">
            No target matches “{query}”.
          </p>
        ) : (
          <table className="targets" data-testid="targets-table">
            <thead>
              <tr>
                <th>Source → target</th>
                <th>Tests</th>
                <th className="number">RTT median</th>
                <th className="number">Loss</th>
                <th>Last run</th>
                <th>Age</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <TargetRow
                  key={`${row.source.id}/${row.target}`}
                  row={row}
                  meshes={named.get(normalizeTarget(row.target)) ?? []}
                  statuses={choices.data?.run_status}
                  now={now}
                />
              ))}
            </tbody>
          </table>
        )}
        <p className="muted">RTT and loss are of the last hour of pings; as of {formatUtc(targets.data.generated_at)}.</p>
      </>
    );
  }
  return (
    <section aria-labelledby="targets-heading">
      <h2 id="targets-heading">External targets</h2>
      {body}
    </section>
  );
}
