import { useState } from "react";

import { ApiError } from "../api/client";
import {
  useAlertRules,
  useChannels,
  useCreateSilence,
  useExpireSilence,
  useMe,
  useSilences,
  useTestChannel,
  type Delivery,
} from "../api/queries";
import { Panel } from "../components/Panel";
import { LoadError, Loading } from "../components/QueryState";
import { formatDuration, formatUtc } from "../lib/format";
import { matcherText } from "../lib/incidents";

function Rules() {
  const rules = useAlertRules();
  if (rules.isPending) {
    return <Loading what="rules" />;
  }
  if (rules.isError) {
    return <LoadError what="rules" error={rules.error} />;
  }
  return (
    <table>
      <thead>
        <tr>
          <th>Rule</th>
          <th>Kind</th>
          <th>Condition</th>
          <th>Severity</th>
          <th>Pending</th>
          <th>Resolves after clear for</th>
          <th>Scope</th>
        </tr>
      </thead>
      <tbody>
        {rules.data.map((rule) => (
          <tr key={rule.id} className={rule.enabled === false ? "muted" : ""}>
            <td title={rule.description}>
              {rule.name}
              {rule.enabled === false && " (off)"}
            </td>
            <td>{rule.kind}</td>
            <td>
              {rule.kind === "threshold"
                ? `${rule.metric ?? ""} ${rule.comparison ?? ""} ${String(rule.value)} in ${String(rule.k)} of ${String(rule.n)} runs`
                : rule.kind === "no_data"
                  ? `${String(rule.k)} of ${String(rule.n)} runs failed, or 3 intervals late`
                  : rule.metric !== undefined && rule.metric !== ""
                    ? `a ${rule.metric} finding`
                    : rule.kind === "agent_down"
                      ? "no contact for 3 polls"
                      : "any finding"}
            </td>
            <td>{rule.severity}</td>
            <td>{formatDuration(rule.pending_s ?? 0)}</td>
            <td>{formatDuration(rule.hold_s ?? 0)}</td>
            <td>{rule.scope === undefined || rule.scope.length === 0 ? "everywhere" : matcherText(rule.scope)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

const LABELS = ["path", "agent", "source", "destination", "mesh", "metric", "severity", "rule"] as const;

function NewSilence() {
  const [label, setLabel] = useState<(typeof LABELS)[number]>("agent");
  const [value, setValue] = useState("");
  const [hours, setHours] = useState(2);
  const [comment, setComment] = useState("");
  const create = useCreateSilence();
  return (
    <form
      className="inline-form"
      onSubmit={(event) => {
        event.preventDefault();
        const now = new Date();
        create.mutate({
          matchers: [{ name: label, op: "=", value }],
          starts_at: now.toISOString(),
          ends_at: new Date(now.getTime() + hours * 3_600_000).toISOString(),
          comment,
        });
      }}
    >
      <select
        aria-label="Label"
        value={label}
        onChange={(event) => {
          setLabel(event.target.value as (typeof LABELS)[number]);
        }}
      >
        {LABELS.map((name) => (
          <option key={name}>{name}</option>
        ))}
      </select>{" "}
      ={" "}
      <input
        aria-label="Value"
        value={value}
        placeholder="frankfurt"
        onChange={(event) => {
          setValue(event.target.value);
        }}
      />{" "}
      for{" "}
      <input
        aria-label="Hours"
        type="number"
        min={1}
        value={hours}
        onChange={(event) => {
          setHours(Math.max(1, Number(event.target.value)));
        }}
      />{" "}
      h, because{" "}
      <input
        aria-label="Comment"
        value={comment}
        placeholder="fibre maintenance, ticket 1234"
        onChange={(event) => {
          setComment(event.target.value);
        }}
      />{" "}
      <button type="submit" disabled={create.isPending}>
        Add silence
      </button>
      {create.error !== null && (
        <p className="error" role="alert">
          {create.error instanceof ApiError ? create.error.message : "unexpected error"}
        </p>
      )}
    </form>
  );
}

function Silences({ canEdit }: { canEdit: boolean }) {
  const silences = useSilences();
  const expire = useExpireSilence();
  if (silences.isPending) {
    return <Loading what="silences" />;
  }
  if (silences.isError) {
    return <LoadError what="silences" error={silences.error} />;
  }
  return (
    <>
      {canEdit && <NewSilence />}
      {silences.data.length === 0 ? (
        <p className="muted">No silences.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Matches</th>
              <th>State</th>
              <th>From</th>
              <th>Until</th>
              <th>Window</th>
              <th>By</th>
              <th>Why</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {silences.data.map((silence) => (
              <tr key={silence.id}>
                <td>{matcherText(silence.matchers)}</td>
                <td>{silence.state}</td>
                <td>{formatUtc(silence.starts_at)}</td>
                <td>{formatUtc(silence.ends_at)}</td>
                <td>
                  {silence.weekdays !== undefined && silence.weekdays.length > 0
                    ? `days ${silence.weekdays.join(",")} ${silence.window_start ?? ""}–${silence.window_end ?? ""} ${silence.time_zone ?? ""}`
                    : "–"}
                </td>
                <td>{silence.created_by}</td>
                <td>{silence.comment}</td>
                <td>
                  {canEdit && silence.state !== "expired" && (
                    <button
                      type="button"
                      onClick={() => {
                        expire.mutate(silence.id);
                      }}
                    >
                      Expire
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

function TestOutcome({ delivery }: { delivery: Delivery }) {
  const attempt = delivery.attempt_log.at(-1);
  return delivery.status === "sent" ? (
    <span role="status">
      arrived ({attempt?.status_code ?? "ok"}: {attempt?.response})
    </span>
  ) : (
    <span className="error" role="alert">
      not delivered: {delivery.last_error}
    </span>
  );
}

function Channels({ canEdit }: { canEdit: boolean }) {
  const channels = useChannels();
  const test = useTestChannel();
  if (channels.isPending) {
    return <Loading what="channels" />;
  }
  if (channels.isError) {
    return <LoadError what="channels" error={channels.error} />;
  }
  if (channels.data.length === 0) {
    return <p className="muted">No channels: incidents are recorded here but sent nowhere.</p>;
  }
  return (
    <table>
      <thead>
        <tr>
          <th>Channel</th>
          <th>Sends to</th>
          <th>Routes</th>
          <th>State</th>
          <th>Last success</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {channels.data.map((channel) => (
          <tr key={channel.id}>
            <td>
              {channel.name} ({channel.kind})
            </td>
            <td>{channel.target}</td>
            <td>{channel.matchers === undefined || channel.matchers.length === 0 ? "every incident" : matcherText(channel.matchers)}</td>
            <td>
              {channel.enabled === false ? (
                <span className="error">disabled: {channel.disabled_reason}</span>
              ) : channel.last_error !== "" ? (
                <span className="muted">last error: {channel.last_error}</span>
              ) : (
                "ok"
              )}
            </td>
            <td>{channel.last_success_at === null ? "never" : formatUtc(channel.last_success_at)}</td>
            <td>
              {canEdit && (
                <button
                  type="button"
                  disabled={test.isPending}
                  onClick={() => {
                    test.mutate(channel.id);
                  }}
                >
                  Send test
                </button>
              )}{" "}
              {test.data !== undefined && test.variables === channel.id && <TestOutcome delivery={test.data} />}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Rules, silences and maintenance windows, and channels with a test button. */
export function AlertSettingsPage() {
  const me = useMe();
  const canEdit = me.data?.is_staff === true;
  return (
    <>
      <h1>Alerting</h1>
      <Panel title="Rules">
        <Rules />
      </Panel>
      <Panel title="Silences and maintenance windows">
        <Silences canEdit={canEdit} />
      </Panel>
      <Panel title="Channels">
        <Channels canEdit={canEdit} />
      </Panel>
    </>
  );
}
