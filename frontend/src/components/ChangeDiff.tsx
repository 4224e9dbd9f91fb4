import { changeRows, formatChangeValue } from "../lib/changes";

const COMPACT_FIELDS = 3;
const COMPACT_VALUE_LENGTH = 40;

/**
 * What one change did, field by field: old value struck through, new value beside it.
 * `compact` fits a table cell (the first few fields, long values cut); the full form
 * shows every field with its whole value.
 */
export function ChangeDiff({
  changes,
  compact = false,
}: {
  changes: Record<string, readonly [unknown, unknown]>;
  compact?: boolean;
}) {
  const rows = changeRows(changes);
  if (rows.length === 0) {
    return <span className="muted">no field changes</span>;
  }
  if (compact) {
    const more = rows.length - COMPACT_FIELDS;
    return (
      <ul className="change-diff compact">
        {rows.slice(0, COMPACT_FIELDS).map((row) => (
          <li key={row.field}>
            <code className="field">{row.field}</code>{" "}
            {row.kind !== "added" && <del>{formatChangeValue(row.before, COMPACT_VALUE_LENGTH)}</del>}
            {row.kind === "changed" && " → "}
            {row.kind !== "removed" && <ins>{formatChangeValue(row.after, COMPACT_VALUE_LENGTH)}</ins>}
          </li>
        ))}
        {more > 0 && <li className="muted">+{more} more</li>}
      </ul>
    );
  }
  return (
    <table className="change-diff">
      <thead>
        <tr>
          <th>Field</th>
          <th>Before</th>
          <th>After</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.field} data-kind={row.kind}>
            <th scope="row">
              <code>{row.field}</code>
            </th>
            <td>{row.kind === "added" ? <span className="muted">–</span> : <del>{formatChangeValue(row.before)}</del>}</td>
            <td>{row.kind === "removed" ? <span className="muted">–</span> : <ins>{formatChangeValue(row.after)}</ins>}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
