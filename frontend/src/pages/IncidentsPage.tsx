import { Link, useSearchParams } from "react-router-dom";

import { useIncidents } from "../api/alertQueries";
import { useChoices } from "../api/queries";
import { LoadError, Loading } from "../components/QueryState";
import { ChoiceBadge } from "../components/StatusBadge";
import { formatAgo, formatUtc } from "../lib/format";

const FILTERS = [
  { value: "open", label: "Open" },
  { value: "acknowledged", label: "Acknowledged" },
  { value: "resolved", label: "Resolved" },
  { value: "", label: "All" },
] as const;

/** Incidents newest first, by status: what the NOC works through. */
export function IncidentsPage() {
  const [params, setParams] = useSearchParams();
  const status = params.get("status") ?? "open";
  const incidents = useIncidents(status);
  const choices = useChoices();

  return (
    <>
      <h1>Incidents</h1>
      <p className="muted">
        Alerts that share a cause (an agent, a mesh and metric) are one incident and one message.{" "}
        <Link to="/alerts/settings">Rules, silences and channels</Link>
      </p>
      <div className="filters" role="group" aria-label="Status">
        {FILTERS.map((filter) => (
          <button
            key={filter.value}
            type="button"
            className={filter.value === status ? "active" : ""}
            aria-pressed={filter.value === status}
            onClick={() => {
              setParams(filter.value === "open" ? {} : { status: filter.value });
            }}
          >
            {filter.label}
          </button>
        ))}
      </div>
      {incidents.isPending && <Loading what="incidents" />}
      {incidents.isError && <LoadError what="incidents" error={incidents.error} />}
      {incidents.data?.length === 0 && <p className="muted">No {status === "" ? "" : status} incidents.</p>}
      {incidents.data !== undefined && incidents.data.length > 0 && (
        <table className="incidents">
          <thead>
            <tr>
              <th>#</th>
              <th>Incident</th>
              <th>Severity</th>
              <th>Status</th>
              <th>Opened</th>
              <th>Alerts firing</th>
              <th>Acknowledged by</th>
            </tr>
          </thead>
          <tbody>
            {incidents.data.map((incident) => (
              <tr key={incident.id}>
                <td>{incident.id}</td>
                <td>
                  <Link to={`/incidents/${incident.id}`}>{incident.title}</Link>
                </td>
                <td>
                  <ChoiceBadge choices={choices.data?.alert_severity} value={incident.severity} />
                </td>
                <td>
                  <ChoiceBadge choices={choices.data?.incident_status} value={incident.status} />
                </td>
                <td title={formatUtc(incident.opened_at)}>{formatAgo(incident.opened_at)}</td>
                <td>
                  {incident.firing_count} of {incident.alert_count}
                </td>
                <td>{incident.acknowledged_by ?? "–"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
