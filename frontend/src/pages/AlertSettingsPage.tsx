import { useState } from "react";

import { ApiError, type Schemas } from "../api/client";
import {
  useAlertRules,
  useChannels,
  useCreateChannel,
  useCreateRule,
  useCreateSilence,
  useExpireSilence,
  useSilences,
  useTestChannel,
  useUpdateRule,
  type Channel,
  type Delivery,
} from "../api/alertQueries";
import { useChoices } from "../api/queries";
import { Panel } from "../components/Panel";
import { LoadError, Loading } from "../components/QueryState";
import { conditionText, ruleLabel } from "../lib/alertRules";
import { formatDuration, formatUtc } from "../lib/format";
import { CHANNEL_FORMS, channelConfig, matcherText, type ChannelKind } from "../lib/incidents";
import { useCan } from "../lib/roles";

type Comparison = Schemas["ComparisonEnum"];

/** A threshold rule: metric, comparison, value, k of the last n runs, optional scope. */
function NewThresholdRule() {
  const choices = useChoices();
  const [name, setName] = useState("");
  const [metric, setMetric] = useState("throughput_fraction");
  const [comparison, setComparison] = useState<Comparison>("lt");
  const [value, setValue] = useState("0.5");
  const [k, setK] = useState(2);
  const [n, setN] = useState(3);
  const [scope, setScope] = useState("");
  const create = useCreateRule();
  if (choices.isPending) {
    return null;
  }
  return (
    <form
      className="inline-form"
      onSubmit={(event) => {
        event.preventDefault();
        const [label, target] = scope.split("=").map((part) => part.trim());
        create.mutate({
          name,
          kind: "threshold",
          metric,
          comparison,
          value: Number(value),
          k,
          n,
          scope:
            label !== undefined && label !== "" && target !== undefined
              ? [{ name: label as (typeof LABELS)[number], op: "=", value: target }]
              : [],
        });
      }}
    >
      New threshold rule{" "}
      <input aria-label="Rule name" value={name} placeholder="throughput under half" onChange={(e) => { setName(e.target.value); }} />{" "}
      <select aria-label="Metric" value={metric} onChange={(e) => { setMetric(e.target.value); }}>
        {(choices.data?.alert_metric ?? [{ value: metric, label: metric }]).map((m) => (
          <option key={m.value} value={m.value}>
            {m.label}
          </option>
        ))}
      </select>{" "}
      <select aria-label="Comparison" value={comparison} onChange={(e) => { setComparison(e.target.value as Comparison); }}>
        {(choices.data?.alert_comparison ?? [{ value: comparison, label: comparison }]).map((c) => (
          <option key={c.value} value={c.value}>
            {c.label}
          </option>
        ))}
      </select>{" "}
      <input aria-label="Value" className="narrow" value={value} onChange={(e) => { setValue(e.target.value); }} /> in{" "}
      <input aria-label="k" className="narrow" type="number" min={1} value={k} onChange={(e) => { setK(Number(e.target.value)); }} /> of the last{" "}
      <input aria-label="n" className="narrow" type="number" min={1} value={n} onChange={(e) => { setN(Number(e.target.value)); }} /> runs, where{" "}
      <input aria-label="Scope" value={scope} placeholder="mesh=default (optional)" onChange={(e) => { setScope(e.target.value); }} />{" "}
      <button type="submit" disabled={create.isPending}>
        Add rule
      </button>
      {create.error !== null && (
        <p className="error" role="alert">
          {create.error instanceof ApiError ? create.error.message : "unexpected error"}
        </p>
      )}
    </form>
  );
}

function Rules({ canEdit }: { canEdit: boolean }) {
  const rules = useAlertRules();
  const choices = useChoices();
  const update = useUpdateRule();
  // The conditions are worded with the server's labels: wait for them rather than flash the
  // bare values (a failed choices request still falls back to them).
  if (rules.isPending || choices.isPending) {
    return <Loading what="rules" />;
  }
  if (rules.isError) {
    return <LoadError what="rules" error={rules.error} />;
  }
  return (
    <>
    {canEdit && <NewThresholdRule />}
    {update.error !== null && (
      <p className="error" role="alert">
        {update.error instanceof ApiError ? update.error.message : "unexpected error"}
      </p>
    )}
    <table>
      <thead>
        <tr>
          <th>On</th>
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
            <td>
              <input
                type="checkbox"
                aria-label={`${rule.name} enabled`}
                checked={rule.enabled !== false}
                disabled={!canEdit || update.isPending}
                onChange={(event) => {
                  update.mutate({ id: rule.id, patch: { enabled: event.target.checked } });
                }}
              />
            </td>
            <td title={rule.description}>
              {rule.name}
              {rule.enabled === false && " (off)"}
            </td>
            <td>{ruleLabel(choices.data, "alert_rule_kind", rule.kind)}</td>
            <td>{conditionText(rule, choices.data)}</td>
            <td>{rule.severity}</td>
            <td>{rule.pending_s === undefined || rule.pending_s === 0 ? "–" : formatDuration(rule.pending_s)}</td>
            <td>{formatDuration(rule.hold_s ?? 0)}</td>
            <td>{rule.scope === undefined || rule.scope.length === 0 ? "everywhere" : matcherText(rule.scope)}</td>
          </tr>
        ))}
      </tbody>
    </table>
    </>
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
        className="narrow"
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
                  {silence.cron !== undefined && silence.cron !== ""
                    ? `cron "${silence.cron}" for ${formatDuration(silence.duration_s ?? 0)} ${silence.time_zone ?? ""}`
                    : silence.weekdays !== undefined && silence.weekdays.length > 0
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

function NewChannel() {
  const [kind, setKind] = useState<ChannelKind>("email");
  const [name, setName] = useState("");
  const [target, setTarget] = useState("");
  const [secret, setSecret] = useState("");
  const create = useCreateChannel();
  const form = CHANNEL_FORMS[kind];
  return (
    <form
      className="inline-form"
      onSubmit={(event) => {
        event.preventDefault();
        create.mutate({ name, kind, config: channelConfig(kind, target, secret) });
      }}
    >
      <select
        aria-label="Kind"
        value={kind}
        onChange={(event) => {
          setKind(event.target.value as ChannelKind);
        }}
      >
        {Object.entries(CHANNEL_FORMS).map(([value, { label }]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>{" "}
      <input
        aria-label="Channel name"
        value={name}
        placeholder={`noc-${kind}`}
        onChange={(event) => {
          setName(event.target.value);
        }}
      />{" "}
      {form.secret !== null && (
        <>
          <input
            aria-label={form.secret.label}
            type="password"
            autoComplete="off"
            value={secret}
            placeholder={`${form.secret.label}${form.secret.optional ? " (optional)" : ""}`}
            title={form.secret.hint}
            onChange={(event) => {
              setSecret(event.target.value);
            }}
          />{" "}
        </>
      )}
      <input
        aria-label={form.target.label}
        className="wide"
        value={target}
        placeholder={form.target.hint}
        title={form.target.optional ? `${form.target.label} (optional)` : form.target.label}
        onChange={(event) => {
          setTarget(event.target.value);
        }}
      />{" "}
      <button type="submit" disabled={create.isPending}>
        Add channel
      </button>
      {create.data?.secret != null && (
        <p role="status">
          Signing secret (shown once; the receiver verifies webhook-signature with it): <code>{create.data.secret}</code>
        </p>
      )}
      {create.error !== null && (
        <p className="error" role="alert">
          {create.error instanceof ApiError ? create.error.message : "unexpected error"}
        </p>
      )}
    </form>
  );
}

function Channels({ canEdit }: { canEdit: boolean }) {
  const channels = useChannels();
  if (channels.isPending) {
    return <Loading what="channels" />;
  }
  if (channels.isError) {
    return <LoadError what="channels" error={channels.error} />;
  }
  return (
    <>
      {canEdit && <NewChannel />}
      {channels.data.length === 0 ? (
        <p className="muted">No channels: incidents are recorded here but sent nowhere.</p>
      ) : (
        <ChannelTable channels={channels.data} canEdit={canEdit} />
      )}
    </>
  );
}

function ChannelTable({ channels, canEdit }: { channels: Channel[]; canEdit: boolean }) {
  const test = useTestChannel();
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
        {channels.map((channel) => (
          <tr key={channel.id}>
            <td>
              {channel.name} ({CHANNEL_FORMS[channel.kind].label})
            </td>
            <td>{channel.target}</td>
            <td>{channel.matchers === undefined || channel.matchers.length === 0 ? "every incident" : matcherText(channel.matchers)}</td>
            <td>
              {channel.enabled === false ? (
                <span className="error">disabled: {channel.disabled_reason}</span>
              ) : channel.held_until !== null ? (
                <span className="held" title="the receiver asked to wait (Retry-After); editing the channel lifts it">
                  held until {formatUtc(channel.held_until)}
                  {channel.last_error !== "" && `: ${channel.last_error}`}
                </span>
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
  // Operators silence; rules and channels decide who is woken, so only admins change them.
  const canSilence = useCan("operator");
  const canConfigure = useCan("admin");
  return (
    <>
      <h1>Alerting</h1>
      <Panel title="Rules">
        <Rules canEdit={canConfigure} />
      </Panel>
      <Panel title="Silences and maintenance windows">
        <Silences canEdit={canSilence} />
      </Panel>
      <Panel title="Channels">
        <Channels canEdit={canConfigure} />
      </Panel>
    </>
  );
}
