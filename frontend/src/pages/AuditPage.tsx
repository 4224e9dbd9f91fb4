import { Fragment, useState } from "react";
import { Link, useSearchParams } from "react-router-dom";

import { useAuditLog, type AuditEntry } from "../api/agentQueries";
import { useChoices, type Choice } from "../api/queries";
import { ChangeDiff } from "../components/ChangeDiff";
import { Panel } from "../components/Panel";
import { LoadError, Loading } from "../components/QueryState";
import { ChoiceBadge } from "../components/StatusBadge";
import {
  AUDIT_PAGE_SIZE,
  auditFiltersFrom,
  auditParams,
  auditQueryOf,
  beforeIdFrom,
  hasAuditFilters,
  NO_AUDIT_FILTERS,
  type AuditFilters,
} from "../lib/audit";
import { asChanges } from "../lib/changes";
import { formatAgo, formatUtc } from "../lib/format";
import { useCan } from "../lib/roles";
import { choiceFor } from "../lib/schedule";

/** The filter form: it edits a copy and applies it to the URL on submit. */
/** A filter by one of a choice set's values, or "any". */
function ChoiceFilter({
  label,
  value,
  choices,
  onChange,
}: {
  label: string;
  value: string;
  choices: readonly Choice[];
  onChange: (value: string) => void;
}) {
  return (
    <label>
      {label}{" "}
      <select
        value={value}
        onChange={(event) => {
          onChange(event.target.value);
        }}
      >
        <option value="">any</option>
        {choices.map((choice) => (
          <option key={choice.value} value={choice.value}>
            {choice.label}
          </option>
        ))}
      </select>
    </label>
  );
}

function Filters({
  filters,
  objectTypes,
  actions,
  onApply,
}: {
  filters: AuditFilters;
  objectTypes: readonly Choice[];
  actions: readonly Choice[];
  onApply: (filters: AuditFilters) => void;
}) {
  const [draft, setDraft] = useState(filters);
  const set = (key: keyof AuditFilters, value: string) => {
    setDraft({ ...draft, [key]: value });
  };
  return (
    <form
      className="filters audit-filters"
      aria-label="Filter the audit log"
      onSubmit={(event) => {
        event.preventDefault();
        onApply(draft);
      }}
    >
      <ChoiceFilter
        label="Object"
        value={draft.object_type}
        choices={objectTypes}
        onChange={(value) => {
          set("object_type", value);
        }}
      />
      <ChoiceFilter
        label="Action"
        value={draft.action}
        choices={actions}
        onChange={(value) => {
          set("action", value);
        }}
      />
      <label>
        Actor{" "}
        <input
          value={draft.actor}
          placeholder="username"
          onChange={(event) => {
            set("actor", event.target.value);
          }}
        />
      </label>
      <label>
        Name contains{" "}
        <input
          value={draft.q}
          placeholder="athens"
          onChange={(event) => {
            set("q", event.target.value);
          }}
        />
      </label>
      <label>
        Since (UTC){" "}
        <input
          type="datetime-local"
          value={draft.since}
          onChange={(event) => {
            set("since", event.target.value);
          }}
        />
      </label>
      <label>
        Until (UTC){" "}
        <input
          type="datetime-local"
          value={draft.until}
          onChange={(event) => {
            set("until", event.target.value);
          }}
        />
      </label>
      <button type="submit" className="primary">
        Apply
      </button>
      {hasAuditFilters(filters) && (
        <button
          type="button"
          onClick={() => {
            onApply(NO_AUDIT_FILTERS);
          }}
        >
          Clear
        </button>
      )}
    </form>
  );
}

function objectLabel(types: readonly Choice[], value: string): string {
  return choiceFor(types, value)?.label ?? value.replaceAll("_", " ");
}

function AuditRow({
  entry,
  filters,
  objectTypes,
  actions,
}: {
  entry: AuditEntry;
  filters: AuditFilters;
  objectTypes: readonly Choice[];
  actions: readonly Choice[];
}) {
  const [open, setOpen] = useState(false);
  const changes = asChanges(entry.changes);
  const objectHistory = auditParams({ ...NO_AUDIT_FILTERS, object_type: entry.object_type, object_key: entry.object_key }, null);
  const byActor = auditParams({ ...filters, actor: entry.actor_name }, null);
  return (
    <Fragment>
      <tr>
        <td className="nowrap" title={formatAgo(entry.at)}>
          {formatUtc(entry.at)}
        </td>
        <td>
          <Link to={`?${byActor.toString()}`} title="Only this actor's changes">
            {entry.actor_name === "" ? "(unknown)" : entry.actor_name}
          </Link>
          <div className="muted small">via {entry.via}</div>
        </td>
        <td>
          <ChoiceBadge choices={actions} value={entry.action} />
        </td>
        <td>{objectLabel(objectTypes, entry.object_type)}</td>
        <td>
          <Link to={`?${objectHistory.toString()}`} title={`Every change to this ${objectLabel(objectTypes, entry.object_type)}`}>
            {entry.object_repr === "" ? entry.object_key : entry.object_repr}
          </Link>
        </td>
        <td>
          <ChangeDiff changes={changes} compact />
        </td>
        <td>
          <button
            type="button"
            className="link"
            aria-expanded={open}
            // The visible words begin the name, so a voice user who says "Full diff" hits it.
            aria-label={`${open ? "Hide the full diff" : "Full diff"} of change #${String(entry.id)}`}
            onClick={() => {
              setOpen(!open);
            }}
          >
            {open ? "Hide" : "Full diff"}
          </button>
        </td>
      </tr>
      {open && (
        <tr className="detail">
          <td colSpan={7}>
            <p className="muted">
              Entry #{entry.id} · {entry.object_type} key <code>{entry.object_key}</code>
            </p>
            <ChangeDiff changes={changes} />
            <details>
              <summary>Whole object before and after</summary>
              <div className="before-after">
                <div>
                  <h3>Before</h3>
                  <pre>{entry.before == null ? "(did not exist)" : JSON.stringify(entry.before, null, 2)}</pre>
                </div>
                <div>
                  <h3>After</h3>
                  <pre>{entry.after == null ? "(no longer exists)" : JSON.stringify(entry.after, null, 2)}</pre>
                </div>
              </div>
            </details>
          </td>
        </tr>
      )}
    </Fragment>
  );
}

function AuditLog({ filters, beforeId }: { filters: AuditFilters; beforeId: number | null }) {
  const log = useAuditLog(auditQueryOf(filters, beforeId));
  const choices = useChoices();
  const objectTypes = choices.data?.audit_object ?? [];
  const actions = choices.data?.audit_action ?? [];
  if (log.isPending) {
    return <Loading what="the audit log" />;
  }
  if (log.isError) {
    return <LoadError what="the audit log" error={log.error} />;
  }
  const entries = log.data;
  const oldest = entries.at(-1);
  const pager = (
    <div className="toolbar pager">
      {beforeId !== null && (
        <Link to={`?${auditParams(filters, null).toString()}`} className="button">
          ← Newest
        </Link>
      )}
      {entries.length === AUDIT_PAGE_SIZE && oldest !== undefined && (
        <Link to={`?${auditParams(filters, oldest.id).toString()}`} className="button">
          Older →
        </Link>
      )}
    </div>
  );
  if (entries.length === 0) {
    return (
      <>
        <p className="muted">
          {beforeId !== null
            ? "No older entries."
            : hasAuditFilters(filters)
              ? "No entries match these filters."
              : "Nothing recorded yet: changes made here, through the API or with manage.py appear in this log."}
        </p>
        {pager}
      </>
    );
  }
  return (
    <div className={log.isPlaceholderData ? "stale" : undefined}>
      <table className="audit">
        <thead>
          <tr>
            <th>Time</th>
            <th>Actor</th>
            <th>Action</th>
            <th>Type</th>
            <th>Object</th>
            <th>Changes</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {entries.map((entry) => (
            <AuditRow key={entry.id} entry={entry} filters={filters} objectTypes={objectTypes} actions={actions} />
          ))}
        </tbody>
      </table>
      {pager}
    </div>
  );
}

/** Every change to Fathom's configuration: who, when, how (session, token, command) and what (admins). */
export function AuditPage() {
  const isAdmin = useCan("admin");
  const [params, setParams] = useSearchParams();
  const choices = useChoices();
  const filters = auditFiltersFrom(params);
  const beforeId = beforeIdFrom(params);
  if (!isAdmin) {
    return (
      <section>
        <h1>Audit log</h1>
        <p className="muted">Only admins read the audit log.</p>
      </section>
    );
  }
  return (
    <section>
      <h1>Audit log</h1>
      <Filters
        // A new URL (back, a link) starts the form over from it.
        key={auditParams(filters, null).toString()}
        filters={filters}
        objectTypes={choices.data?.audit_object ?? []}
        actions={choices.data?.audit_action ?? []}
        onApply={(next) => {
          setParams(auditParams(next, null));
        }}
      />
      {filters.object_key !== "" && (
        <p>
          History of {filters.object_type === "" ? "object" : filters.object_type} <code>{filters.object_key}</code>{" "}
          <button
            type="button"
            className="link"
            onClick={() => {
              setParams(auditParams({ ...filters, object_key: "" }, null));
            }}
          >
            show all objects
          </button>
        </p>
      )}
      <Panel title="Changes, newest first">
        <AuditLog filters={filters} beforeId={beforeId} />
      </Panel>
    </section>
  );
}
