import { useMeshHistory, useRevertMesh, type AuditEntry, type Mesh } from "../../api/meshQueries";
import { ChangeDiff } from "../../components/ChangeDiff";
import { ConfirmButton } from "../../components/ConfirmButton";
import { LoadError, Loading } from "../../components/QueryState";
import { formatAgo, formatUtc } from "../../lib/format";
import { entryChanges } from "../../lib/meshErrors";

function HistoryEntry({
  entry,
  canEdit,
  error,
  onAsk,
  onRevert,
}: {
  entry: AuditEntry;
  canEdit: boolean;
  error: string | null;
  onAsk: () => void;
  onRevert: () => Promise<unknown>;
}) {
  const at = entry.at ?? null;
  return (
    <li className="history-entry">
      <header>
        <time dateTime={at ?? undefined} title={formatUtc(at)}>
          {formatUtc(at)}
        </time>
        <span className="muted">{formatAgo(at)}</span>
        <strong>{entry.action}</strong>
        <span>
          by {entry.actor_name} <span className="muted">via {entry.via}</span>
        </span>
      </header>
      <ChangeDiff changes={entryChanges(entry.changes)} />
      {canEdit && (
        <ConfirmButton
          label="Revert this change"
          question="Restore the mesh as it was before this change? Unsaved edits in the form are lost."
          confirmLabel="Confirm revert"
          busyLabel="Reverting…"
          groupLabel="Confirm the revert"
          onAsk={onAsk}
          onConfirm={onRevert}
        />
      )}
      {error !== null && (
        <p className="error" role="alert">
          The server refused the revert: {error}
        </p>
      )}
    </li>
  );
}

/** Every change to the mesh, newest first, each with its diff and a way back. */
export function HistoryPanel({
  name,
  canEdit,
  onReverted,
}: {
  name: string;
  canEdit: boolean;
  onReverted: (mesh: Mesh, entry: AuditEntry) => void;
}) {
  const history = useMeshHistory(name);
  const revert = useRevertMesh(name);

  if (history.isPending) {
    return <Loading what="the mesh's history" />;
  }
  if (history.isError) {
    return <LoadError what="the mesh's history" error={history.error} />;
  }
  if (history.data.length === 0) {
    return <p className="muted">No recorded changes: this mesh was made before the audit log, or by a migration.</p>;
  }
  return (
    <ol className="history" aria-label="Changes to this mesh">
      {history.data.map((entry) => (
        <HistoryEntry
          key={entry.id}
          entry={entry}
          canEdit={canEdit}
          error={revert.isError && revert.variables === entry.id ? revert.error.message : null}
          onAsk={() => {
            revert.reset();
          }}
          onRevert={() =>
            revert.mutateAsync(entry.id).then((mesh) => {
              onReverted(mesh, entry);
            })
          }
        />
      ))}
    </ol>
  );
}
