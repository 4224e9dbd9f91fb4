import { useMemo, useState } from "react";
import { Link, useParams } from "react-router-dom";

import { ApiError } from "../api/client";
import {
  useCreateSilence,
  useIncident,
  useIncidentAction,
  type Delivery,
  type IncidentAlert,
  type IncidentDetail,
} from "../api/alertQueries";
import { useChoices, useRttWindow } from "../api/queries";
import { Panel } from "../components/Panel";
import { PlotlyChart } from "../components/PlotlyChart";
import { LoadError, Loading } from "../components/QueryState";
import { ChoiceBadge } from "../components/StatusBadge";
import { formatAgo, formatUtc } from "../lib/format";
import { alertWindow, matcherText, pathEnds, pathLink, silenceFor } from "../lib/incidents";
import { useCan } from "../lib/roles";
import { bucketsOf, rttLayout, rttTraces } from "../lib/rttTraces";

function failure(error: Error | null): string | null {
  if (error === null) {
    return null;
  }
  return error instanceof ApiError ? error.message : "unexpected error";
}

/** Acknowledge, resolve, or silence one of its alerts, each with a comment. */
function Actions({ incident }: { incident: IncidentDetail }) {
  const [comment, setComment] = useState("");
  const [hours, setHours] = useState(2);
  const [target, setTarget] = useState(0);
  const acknowledge = useIncidentAction(incident.id, "acknowledge");
  const resolve = useIncidentAction(incident.id, "resolve");
  const silence = useCreateSilence();
  const alert = incident.alerts[target];
  const preview = alert === undefined ? null : silenceFor(alert, hours, comment);
  const error = failure(acknowledge.error ?? resolve.error ?? silence.error);

  return (
    <div className="incident-actions">
      <label>
        Comment{" "}
        <input
          type="text"
          value={comment}
          maxLength={2000}
          placeholder="what you found, a ticket"
          onChange={(event) => {
            setComment(event.target.value);
          }}
        />
      </label>
      <div className="buttons">
        {incident.status === "open" && (
          <button
            type="button"
            disabled={acknowledge.isPending}
            onClick={() => {
              acknowledge.mutate(comment);
            }}
          >
            Acknowledge
          </button>
        )}
        {incident.status !== "resolved" && (
          <button
            type="button"
            disabled={resolve.isPending}
            onClick={() => {
              resolve.mutate(comment);
            }}
          >
            Resolve
          </button>
        )}
      </div>
      {preview !== null && incident.alerts.length > 0 && (
        <div className="silence-form">
          <label>
            Silence{" "}
            <select
              value={target}
              onChange={(event) => {
                setTarget(Number(event.target.value));
              }}
            >
              {incident.alerts.map((item, index) => (
                <option key={item.id} value={index}>
                  {item.summary}
                </option>
              ))}
            </select>
          </label>{" "}
          <label>
            for{" "}
            <input
              type="number"
              min={1}
              max={720}
              value={hours}
              onChange={(event) => {
                setHours(Math.max(1, Number(event.target.value)));
              }}
            />{" "}
            hours
          </label>{" "}
          <button
            type="button"
            disabled={silence.isPending || comment.trim() === ""}
            title={comment.trim() === "" ? "say why in the comment" : matcherText(preview.matchers)}
            onClick={() => {
              silence.mutate(preview);
            }}
          >
            Silence from here
          </button>
          <p className="muted">Matches {matcherText(preview.matchers)}. Alerts stay recorded; nothing is sent for them.</p>
        </div>
      )}
      {silence.isSuccess && <p role="status">Silenced until {formatUtc(silence.data.ends_at)}.</p>}
      {error !== null && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

// Evidence comes as jsonb, without key order: before, now and change lead.
const EVIDENCE_ORDER = ["before", "now", "change", "rules", "changed_at", "detected_at", "reasons", "test"];

function evidenceRank(key: string): number {
  const rank = EVIDENCE_ORDER.indexOf(key);
  return rank === -1 ? EVIDENCE_ORDER.length : rank;
}

function Evidence({ alert }: { alert: IncidentAlert }) {
  const evidence = (alert.evidence ?? {}) as Record<string, unknown>;
  const rows = Object.entries(evidence)
    .filter(([key]) => key !== "detail")
    .sort(([a], [b]) => evidenceRank(a) - evidenceRank(b) || a.localeCompare(b));
  if (rows.length === 0) {
    return null;
  }
  return (
    <dl className="evidence">
      {rows.map(([key, value]) => (
        <div key={key}>
          <dt>{key.replaceAll("_", " ")}</dt>
          <dd>{typeof value === "string" || typeof value === "number" ? String(value) : JSON.stringify(value)}</dd>
        </div>
      ))}
    </dl>
  );
}

/** The path's RTT from an hour before the alert to its end (or now): what it looked like then. */
function AlertRttChart({ alert }: { alert: IncidentAlert }) {
  const ends = pathEnds(alert);
  const span = useMemo(() => alertWindow(alert, new Date()), [alert]);
  const series = useRttWindow(ends?.source ?? "", ends?.destination ?? "", span.start, span.end, 400, ends?.family);
  const traces = useMemo(() => (series.data === undefined ? [] : rttTraces(bucketsOf(series.data.points), series.data.bucket_s)), [series.data]);
  const layout = useMemo(() => rttLayout(span.start, span.end), [span]);
  if (ends === null) {
    return null;
  }
  if (series.isPending) {
    return <Loading what="the path's RTT at the time" />;
  }
  if (series.isError) {
    return <LoadError what="the path's RTT at the time" error={series.error} />;
  }
  if (series.data.points.length === 0) {
    return <p className="muted">No RTT samples on this path around the alert.</p>;
  }
  return <PlotlyChart data={traces} layout={layout} uiRevision={String(alert.id)} height={260} testId="alert-rtt-chart" />;
}

function AlertRow({ alert, states }: { alert: IncidentAlert; states: Parameters<typeof ChoiceBadge>[0]["choices"] }) {
  const link = pathLink(alert);
  return (
    <li className="incident-alert">
      <p>
        <ChoiceBadge choices={states} value={alert.state} /> {alert.silenced && <span className="badge-plain">silenced</span>}{" "}
        {alert.inhibited && <span className="badge-plain">held back (agent down)</span>} <strong>{alert.summary}</strong>
      </p>
      <p className="muted">
        Rule {alert.rule} ({alert.severity}), since {formatUtc(alert.started_at)}
        {alert.resolved_at !== null && `, resolved ${formatUtc(alert.resolved_at)}`}
        {link !== null && (
          <>
            {" · "}
            <Link to={link}>path page</Link>
          </>
        )}
      </p>
      <Evidence alert={alert} />
      <AlertRttChart alert={alert} />
      {alert.advice !== "" && (
        <>
          <h3>What to do</h3>
          <pre className="advice">{alert.advice}</pre>
        </>
      )}
    </li>
  );
}

function Deliveries({ deliveries, states }: { deliveries: Delivery[]; states: Parameters<typeof ChoiceBadge>[0]["choices"] }) {
  if (deliveries.length === 0) {
    return <p className="muted">Nothing sent yet (the first message waits for the group wait; silenced alerts send nothing).</p>;
  }
  return (
    <table>
      <thead>
        <tr>
          <th>Message</th>
          <th>Channel</th>
          <th>Status</th>
          <th>Attempts</th>
          <th>Last answer</th>
          <th>Sent</th>
        </tr>
      </thead>
      <tbody>
        {deliveries.map((delivery) => {
          const last = delivery.attempt_log.at(-1);
          return (
            <tr key={delivery.id}>
              <td>
                {delivery.sequence}. {delivery.kind}
              </td>
              <td>
                {delivery.channel} ({delivery.channel_kind})
              </td>
              <td>
                <ChoiceBadge choices={states} value={delivery.status} />
              </td>
              <td>{delivery.attempts}</td>
              <td>{last === undefined ? "–" : last.ok ? String(last.status_code ?? "ok") : last.error}</td>
              <td>{delivery.sent_at === null ? "–" : formatUtc(delivery.sent_at)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

export function IncidentPage() {
  const { id } = useParams();
  const incident = useIncident(Number(id));
  const choices = useChoices();
  const canOperate = useCan("operator");

  if (incident.isPending) {
    return <Loading what="the incident" />;
  }
  if (incident.isError) {
    return <LoadError what="the incident" error={incident.error} />;
  }
  const data = incident.data;
  return (
    <>
      <p>
        <Link to="/incidents">Incidents</Link>
      </p>
      <h1>
        #{data.id} {data.title}
      </h1>
      <p>
        <ChoiceBadge choices={choices.data?.alert_severity} value={data.severity} />{" "}
        <ChoiceBadge choices={choices.data?.incident_status} value={data.status} /> opened {formatAgo(data.opened_at)} (
        {formatUtc(data.opened_at)})
        {data.acknowledged_by !== null && ` · acknowledged by ${data.acknowledged_by}${data.ack_comment === "" ? "" : `: “${data.ack_comment}”`}`}
        {data.resolved_at !== null && ` · resolved ${formatUtc(data.resolved_at)}${data.resolved_by === null ? "" : ` by ${data.resolved_by}`}`}
      </p>
      {data.cause !== "" && (
        <p className="incident-cause" data-testid="incident-cause">
          <strong>Where:</strong> {data.cause}
        </p>
      )}
      {canOperate && data.status !== "resolved" && <Actions incident={data} />}
      <Panel title={`Alerts (${String(data.alerts.length)})`}>
        <ul className="incident-alerts">
          {data.alerts.map((alert) => (
            <AlertRow key={alert.id} alert={alert} states={choices.data?.alert_state} />
          ))}
        </ul>
      </Panel>
      <Panel title="Timeline">
        <ol className="timeline">
          {data.events.map((event, index) => (
            <li key={index}>
              <time dateTime={event.at}>{formatUtc(event.at)}</time> {event.text}
              {event.actor !== "" && <span className="muted"> ({event.actor})</span>}
            </li>
          ))}
        </ol>
      </Panel>
      <Panel title="Messages sent">
        <Deliveries deliveries={data.deliveries} states={choices.data?.delivery_status} />
      </Panel>
    </>
  );
}
