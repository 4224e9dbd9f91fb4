import { Link } from "react-router-dom";

import { usePaths } from "../api/queries";
import { LoadError, Loading } from "../components/QueryState";
import { formatAgo, formatUtc } from "../lib/format";
import { testKind } from "../lib/testKinds";

export function pathHref(sourceId: string, destinationId: string): string {
  return `/paths/${sourceId}/${destinationId}`;
}

/** Every measured source -> destination pair, freshest first. */
export function PathsPage() {
  const paths = usePaths();
  if (paths.isPending) {
    return <Loading what="paths" />;
  }
  if (paths.isError) {
    return <LoadError what="paths" error={paths.error} />;
  }
  const rows = [...paths.data].sort(
    (a, b) =>
      a.source.name.localeCompare(b.source.name) || a.destination.name.localeCompare(b.destination.name),
  );
  return (
    <section>
      <h1>Paths</h1>
      {rows.length === 0 ? (
        <p className="muted">
          No measurements yet. Enrolled agents start probing each other within a minute of seeing
          their plan.
        </p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Path</th>
              <th>Tests</th>
              <th>Last result</th>
              <th>Last status</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((path) => (
              <tr key={`${path.source.id}-${path.destination.id}`}>
                <td>
                  <Link to={pathHref(path.source.id, path.destination.id)}>
                    {path.source.name} → {path.destination.name}
                  </Link>
                </td>
                <td>{path.test_types.map((type) => testKind(type).label).join(", ")}</td>
                <td title={formatUtc(path.last_run_at)}>{formatAgo(path.last_run_at)}</td>
                <td>{path.last_status}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
