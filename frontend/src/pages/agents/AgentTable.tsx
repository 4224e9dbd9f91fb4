// The agents table: one row per agent or perfSONAR node, with its actions.
import { Fragment, useState } from "react";

import {
  useAgentAction,
  useCreateEnrollmentToken,
  useRenameAgent,
  type IssuedEnrollmentToken,
} from "../../api/agentQueries";
import type { Agent, Choice } from "../../api/queries";
import { ConfirmButton } from "../../components/ConfirmButton";
import { FieldError, FormError } from "../../components/FormErrors";
import { ChoiceBadge, StatusBadge } from "../../components/StatusBadge";
import { agentWarnings, isDecommissioned, isOffline, isRevoked } from "../../lib/agents";
import { ENROLMENT_EXPIRIES } from "../../lib/expiry";
import { formatAgo, formatUtc } from "../../lib/format";
import { splitErrors } from "../../lib/formErrors";
import { parseHostFacts } from "../../lib/hostFacts";
import { NodeRow } from "../perfsonar/NodeRow";
import type { AgentsRow } from "../perfsonar/nodes";
import { IssuedEnrolment } from "./Enrolment";
import { HostFactsPanel } from "./HostFactsPanel";
import { agentAddresses } from "../../lib/family";

function RenameForm({ agent, onDone }: { agent: Agent; onDone: () => void }) {
  const [name, setName] = useState(agent.name);
  const rename = useRenameAgent();
  const errors = splitErrors(rename.error, ["name"]);
  return (
    <form
      className="inline-edit"
      onSubmit={(event) => {
        event.preventDefault();
        if (name.trim() === agent.name) {
          onDone();
          return;
        }
        rename.mutate({ id: agent.id, name: name.trim() }, { onSuccess: onDone });
      }}
    >
      <input
        aria-label={`New name for ${agent.name}`}
        value={name}
        aria-invalid={errors.fields.name !== undefined}
        autoFocus
        onChange={(event) => {
          setName(event.target.value);
        }}
      />{" "}
      <button type="submit" disabled={rename.isPending || name.trim() === ""}>
        Save
      </button>{" "}
      <button type="button" onClick={onDone}>
        Cancel
      </button>
      <FieldError message={errors.fields.name} />
      <FormError message={errors.general} />
    </form>
  );
}

/** Rename, re-key, revoke and decommission one agent (operators and admins). */
function AgentActions({
  agent,
  onRename,
  onRekeyed,
}: {
  agent: Agent;
  onRename: () => void;
  onRekeyed: (issued: IssuedEnrollmentToken) => void;
}) {
  const revoke = useAgentAction("revoke");
  const decommission = useAgentAction("decommission");
  const rekey = useCreateEnrollmentToken();
  const busy = revoke.isPending || decommission.isPending || rekey.isPending;
  const error = splitErrors(revoke.error ?? decommission.error ?? rekey.error, []).general;
  if (isDecommissioned(agent)) {
    return <span className="muted">decommissioned {formatAgo(agent.decommissioned_at)}</span>;
  }
  const revoked = isRevoked(agent);
  return (
    <div className="row-actions">
      <button type="button" onClick={onRename} disabled={busy}>
        Rename
      </button>
      {!revoked && (
        <button
          type="button"
          disabled={busy}
          title="Issue a single-use token that gives this agent a new credential"
          onClick={() => {
            rekey.mutate(
              { agent_name: agent.name, rekey: true, expires_in_s: ENROLMENT_EXPIRIES[0].seconds, note: "re-key" },
              { onSuccess: onRekeyed },
            );
          }}
        >
          Re-key
        </button>
      )}
      {!revoked && (
        <ConfirmButton
          label="Revoke"
          question={`Revoke ${agent.name}? Its credential stops working now and no token can re-enrol it.`}
          disabled={busy}
          onConfirm={() => {
            revoke.mutate(agent.id);
          }}
        />
      )}
      <ConfirmButton
        label="Decommission"
        question={`Decommission ${agent.name}? Its results and history are kept; it leaves every mesh and plan and its credential is refused.`}
        disabled={busy}
        onConfirm={() => {
          decommission.mutate(agent.id);
        }}
      />
      {error !== null && (
        <span className="error" role="alert">
          {error}
        </span>
      )}
    </div>
  );
}

function AgentRow({
  agent,
  canOperate,
  columns,
  kindChoices,
}: {
  agent: Agent;
  canOperate: boolean;
  columns: number;
  kindChoices: readonly Choice[] | undefined;
}) {
  const [open, setOpen] = useState(false);
  const [renaming, setRenaming] = useState(false);
  const [rekeyed, setRekeyed] = useState<IssuedEnrollmentToken | null>(null);
  const facts = parseHostFacts(agent.host_facts);
  const offline = isOffline(agent);
  const decommissioned = isDecommissioned(agent);
  const rowClass = offline ? "agent-offline" : decommissioned ? "disabled" : undefined;
  return (
    <Fragment>
      <tr className={rowClass}>
        <td>
          {renaming ? (
            <RenameForm
              agent={agent}
              onDone={() => {
                setRenaming(false);
              }}
            />
          ) : (
            <strong>{agent.name}</strong>
          )}
        </td>
        <td>
          <ChoiceBadge choices={kindChoices} value="fathom" />
        </td>
        <td>{agentAddresses(agent).join(", ")}</td>
        <td>
          <StatusBadge choice={agent.status} />
          {offline && (
            <span className="flag" title="No contact within the expected poll interval">
              {" "}
              no contact
            </span>
          )}
        </td>
        <td className={offline ? "nowrap flag" : "nowrap"} title={formatUtc(agent.last_seen_at)}>
          {formatAgo(agent.last_seen_at)}
          {agentWarnings(agent).map((warning) => (
            <div key={warning} className="flag agent-warning">
              {warning}
            </div>
          ))}
        </td>
        <td className="version">{agent.agent_version === undefined || agent.agent_version === "" ? "–" : agent.agent_version}</td>
        <td>
          {facts === null ? (
            <span className="muted">not reported</span>
          ) : (
            <button
              type="button"
              className="link"
              aria-expanded={open}
              onClick={() => {
                setOpen(!open);
              }}
            >
              {open ? "Hide host facts" : "Show host facts"}
            </button>
          )}
        </td>
        {canOperate && (
          <td>
            <AgentActions
              agent={agent}
              onRename={() => {
                setRenaming(true);
              }}
              onRekeyed={setRekeyed}
            />
          </td>
        )}
      </tr>
      {rekeyed !== null && (
        <tr className="detail">
          <td colSpan={columns}>
            <IssuedEnrolment
              issued={rekeyed}
              name={agent.name}
              address={agentAddresses(agent).join(" ")}
              onDone={() => {
                setRekeyed(null);
              }}
            />
          </td>
        </tr>
      )}
      {open && facts !== null && (
        <tr className="detail">
          <td colSpan={columns}>
            <HostFactsPanel facts={facts} collectedAt={agent.host_facts_at ?? null} />
          </td>
        </tr>
      )}
    </Fragment>
  );
}

export function AgentTable({
  rows,
  canOperate,
  kindChoices,
}: {
  rows: AgentsRow[];
  canOperate: boolean;
  kindChoices: readonly Choice[] | undefined;
}) {
  const columns = canOperate ? 8 : 7;
  return (
    <table>
      <thead>
        <tr>
          <th>Name</th>
          <th>Kind</th>
          <th>Addresses</th>
          <th>Status</th>
          <th>Last contact</th>
          <th>Version</th>
          <th>Host</th>
          {canOperate && <th>Actions</th>}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) =>
          row.kind === "fathom" && row.agent !== null ? (
            <AgentRow key={row.key} agent={row.agent} canOperate={canOperate} columns={columns} kindChoices={kindChoices} />
          ) : (
            <NodeRow key={row.key} row={row} canOperate={canOperate} columns={columns} kindChoices={kindChoices} />
          ),
        )}
      </tbody>
    </table>
  );
}

