import { Fragment, useState } from "react";

import type { PerfsonarNode } from "../api/perfsonar";
import { usePerfsonarNodes } from "../api/perfsonarQueries";
import {
  useAgentAction,
  useAgents,
  useChoices,
  useCreateEnrollmentToken,
  useEnrollmentTokens,
  useRenameAgent,
  useRevokeEnrollmentToken,
  type Agent,
  type Choice,
  type IssuedEnrollmentToken,
} from "../api/queries";
import { ConfirmButton } from "../components/ConfirmButton";
import { Field, TextField } from "../components/Field";
import { FieldError, FormError } from "../components/FormErrors";
import { OnceSecret } from "../components/OnceSecret";
import { Panel } from "../components/Panel";
import { LoadError, Loading } from "../components/QueryState";
import { ChoiceBadge, StatusBadge } from "../components/StatusBadge";
import { agentCounts, isDecommissioned, isOffline, isRevoked } from "../lib/agents";
import { enrollCommand } from "../lib/commands";
import { ENROLMENT_EXPIRIES } from "../lib/expiry";
import { formatAgo, formatBytes, formatLinkSpeed, formatUtc } from "../lib/format";
import { splitErrors } from "../lib/formErrors";
import { isByteSysctl, parseHostFacts, sysctlBytes, type HostFacts } from "../lib/hostFacts";
import { useCan } from "../lib/roles";
import { AddNodeForm, NodeAddedNotice } from "./perfsonar/AddNodeForm";
import { NodeRow } from "./perfsonar/NodeRow";
import { mergeAgentRows, nodeCounts, rowsInOrder, type AgentsRow } from "./perfsonar/nodes";

function SysctlValue({ name, value }: { name: string; value: string }) {
  const bytes = isByteSysctl(name) ? sysctlBytes(value) : null;
  if (bytes === null) {
    return <code>{value}</code>;
  }
  return (
    <>
      <code>{value}</code> <span className="muted">({bytes.map(formatBytes).join(" / ")})</span>
    </>
  );
}

export function HostFactsPanel({ facts, collectedAt }: { facts: HostFacts; collectedAt: string | null }) {
  return (
    <div className="facts">
      <p className="muted">Reported {formatAgo(collectedAt)} ({formatUtc(collectedAt)}).</p>
      <dl className="figures">
        <div>
          <dt>Host</dt>
          <dd>{facts.hostname ?? "–"}</dd>
        </div>
        <div>
          <dt>Kernel</dt>
          <dd>{facts.kernel ?? "–"}</dd>
        </div>
        <div>
          <dt>CPUs</dt>
          <dd>{facts.cpus ?? "–"}</dd>
        </div>
        <div>
          <dt>iperf3</dt>
          <dd>
            {facts.iperf3Version ?? "not installed"}
            {facts.iperf3Port !== null && ` (server on port ${facts.iperf3Port})`}
          </dd>
        </div>
      </dl>
      <h3>Interfaces</h3>
      <table>
        <thead>
          <tr>
            <th>Name</th>
            <th>MTU</th>
            <th>Link speed</th>
            <th>Addresses</th>
          </tr>
        </thead>
        <tbody>
          {facts.interfaces.map((iface) => (
            <tr key={iface.name}>
              <td>{iface.name}</td>
              <td>{iface.mtu ?? "–"}</td>
              <td>{formatLinkSpeed(iface.speedMbps)}</td>
              <td>{iface.addresses.join(", ")}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>TCP tuning</h3>
      <table>
        <tbody>
          {facts.sysctls.map(([name, value]) => (
            <tr key={name}>
              <th scope="row">
                <code>{name}</code>
              </th>
              <td>
                <SysctlValue name={name} value={value} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The origin agents enrol against: the one this UI is served from. */
function serverOrigin(): string {
  return window.location.origin;
}

/** A just-issued enrolment or re-key token, with the line to run on the endpoint. */
function IssuedEnrolment({
  issued,
  name,
  address,
  onDone,
}: {
  issued: IssuedEnrollmentToken;
  name: string;
  address: string;
  onDone: () => void;
}) {
  const command = enrollCommand({
    server: serverOrigin(),
    token: issued.token,
    name: issued.agent_name !== "" ? issued.agent_name : name,
    address,
    rekey: issued.rekey,
  });
  return (
    <OnceSecret
      title={issued.rekey ? `Re-key token for ${issued.agent_name}` : "Enrolment token"}
      secret={issued.token}
      command={command}
      commandLabel={issued.rekey ? "On the agent's host (replaces its credential):" : "On the endpoint:"}
      onDone={onDone}
    >
      <p className="muted">
        Single use, valid until {formatUtc(issued.expires_at)}
        {issued.agent_name === "" ? " for any name not enrolled yet" : ` for ${issued.agent_name} only`}.
        {command.includes(" <") && " Replace each <placeholder> before running it."}
      </p>
    </OnceSecret>
  );
}

const ENROL_FIELDS = ["agent_name", "expires_in_s", "note"] as const;

/** Creates an enrolment token and shows it, once, with the enrol command. */
function EnrolAgent({ onClose }: { onClose: () => void }) {
  const [name, setName] = useState("");
  const [address, setAddress] = useState("");
  const [expiresInS, setExpiresInS] = useState<number>(ENROLMENT_EXPIRIES[0].seconds);
  const [note, setNote] = useState("");
  const create = useCreateEnrollmentToken();
  const errors = splitErrors(create.error, ENROL_FIELDS);

  if (create.data !== undefined) {
    return (
      <IssuedEnrolment
        issued={create.data}
        name={name}
        address={address}
        onDone={() => {
          create.reset();
          onClose();
        }}
      />
    );
  }
  return (
    <form
      className="stacked-form"
      onSubmit={(event) => {
        event.preventDefault();
        create.mutate({ agent_name: name.trim(), expires_in_s: expiresInS, note: note.trim(), rekey: false });
      }}
    >
      <TextField
        label="Agent name"
        error={errors.fields.agent_name}
        hint="Blank: the token enrols any name not enrolled yet."
        value={name}
        placeholder="athens"
        onChange={setName}
      />
      <TextField
        label="Address"
        hint="Only for the command line: the agent registers it when it enrols."
        value={address}
        placeholder="198.18.1.2"
        onChange={setAddress}
      />
      <Field label="Valid for" error={errors.fields.expires_in_s}>
        {(props) => (
          <select
            {...props}
            value={expiresInS}
            onChange={(event) => {
              setExpiresInS(Number(event.target.value));
            }}
          >
            {ENROLMENT_EXPIRIES.map((choice) => (
              <option key={choice.seconds} value={choice.seconds}>
                {choice.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <TextField label="Note" error={errors.fields.note} value={note} placeholder="rack 4, ticket 1234" onChange={setNote} />
      <FormError message={errors.general} />
      <div className="buttons">
        <button type="submit" className="primary" disabled={create.isPending}>
          Create enrolment token
        </button>
        <button type="button" onClick={onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}

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
        <td>{agent.address}</td>
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
              address={agent.address}
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

function AgentTable({
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
          <th>Address</th>
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

/** Enrolment and re-key tokens: who they are for, whether they are still usable, and revoke. */
function EnrollmentTokens() {
  const tokens = useEnrollmentTokens();
  const revoke = useRevokeEnrollmentToken();
  const [showAll, setShowAll] = useState(false);
  if (tokens.isPending) {
    return <Loading what="enrolment tokens" />;
  }
  if (tokens.isError) {
    return <LoadError what="enrolment tokens" error={tokens.error} />;
  }
  const shown = showAll ? tokens.data : tokens.data.filter((token) => token.state.value === "active");
  const error = splitErrors(revoke.error, []).general;
  return (
    <>
      <label className="toggle">
        <input
          type="checkbox"
          checked={showAll}
          onChange={(event) => {
            setShowAll(event.target.checked);
          }}
        />{" "}
        Show used, expired and revoked ({tokens.data.length - tokens.data.filter((t) => t.state.value === "active").length})
      </label>
      <FormError message={error} />
      {shown.length === 0 ? (
        <p className="muted">
          {showAll ? "No enrolment tokens yet." : "No usable enrolment tokens."} “Enrol an agent” creates one.
        </p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Token</th>
              <th>For</th>
              <th>Note</th>
              <th>Created</th>
              <th>Expires</th>
              <th>State</th>
              <th>Used by</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {shown.map((token) => (
              <tr key={token.id} className={token.state.value === "active" ? undefined : "disabled"}>
                <td>
                  <code>{token.prefix}…</code>
                </td>
                <td>
                  {token.rekey ? "re-key " : ""}
                  {token.agent_name === undefined || token.agent_name === "" ? (
                    <span className="muted">any new name</span>
                  ) : (
                    token.agent_name
                  )}
                </td>
                <td>{token.note}</td>
                <td className="nowrap" title={formatUtc(token.created_at)}>
                  {formatAgo(token.created_at)}
                </td>
                <td className="nowrap">{formatUtc(token.expires_at)}</td>
                <td>
                  <StatusBadge choice={token.state} />
                </td>
                <td>{token.used_by === "" ? "–" : token.used_by}</td>
                <td>
                  {token.state.value === "active" && (
                    <ConfirmButton
                      label="Revoke"
                      question="Revoke this token? It can no longer enrol anything."
                      disabled={revoke.isPending}
                      onConfirm={() => {
                        revoke.mutate(token.id);
                      }}
                    />
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

/** Fathom agents and perfSONAR nodes in one table; a node's own details come from the nodes API. */
function AgentList({ canOperate }: { canOperate: boolean }) {
  const agents = useAgents();
  const nodes = usePerfsonarNodes();
  const choices = useChoices();
  const [showDecommissioned, setShowDecommissioned] = useState(false);
  if (agents.isPending) {
    return <Loading what="agents" />;
  }
  if (agents.isError) {
    return <LoadError what="agents" error={agents.error} />;
  }
  const rows = mergeAgentRows(agents.data, nodes.data);
  const fathomAgents = rows.flatMap((row) => (row.kind === "fathom" && row.agent !== null ? [row.agent] : []));
  const counts = agentCounts(fathomAgents);
  const nodeCount = nodeCounts(rows);
  const decommissioned = rows.length - rowsInOrder(rows, false).length;
  const shown = rowsInOrder(rows, showDecommissioned);
  return (
    <>
      {nodes.isError && <LoadError what="the perfSONAR nodes" error={nodes.error} />}
      <div className="toolbar">
        <span className="agent-counts" role="status">
          {counts.live} agents · {counts.online} online ·{" "}
          <span className={counts.offline > 0 ? "flag" : undefined}>{counts.offline} offline</span>
          {counts.neverSeen > 0 && ` · ${String(counts.neverSeen)} never seen`}
          {nodeCount.live > 0 && (
            <>
              {" "}
              · {nodeCount.live} perfSONAR {nodeCount.live === 1 ? "node" : "nodes"}
              {nodeCount.unreachable > 0 && (
                <>
                  {" "}
                  (<span className="flag">{nodeCount.unreachable} unreachable</span>)
                </>
              )}
            </>
          )}
        </span>
        <label className="toggle">
          <input
            type="checkbox"
            checked={showDecommissioned}
            onChange={(event) => {
              setShowDecommissioned(event.target.checked);
            }}
          />{" "}
          Show decommissioned ({decommissioned})
        </label>
      </div>
      {shown.length === 0 ? (
        <p className="muted">
          {rows.length === 0
            ? canOperate
              ? "No agents yet. “Enrol an agent” creates a token and the command to run on the endpoint; “Add perfSONAR node” drives an existing perfSONAR node."
              : "No agents yet. An operator enrols them, or adds perfSONAR nodes, from this page."
            : "Every agent is decommissioned: tick “Show decommissioned” to see them."}
        </p>
      ) : (
        <AgentTable rows={shown} canOperate={canOperate} kindChoices={choices.data?.agent_kind} />
      )}
    </>
  );
}

/**
 * Every enrolled agent and perfSONAR node: is it alive, what runs it, how its TCP stack is
 * tuned, what a node offers and what is wrong with it; operators manage them.
 */
export function AgentsPage() {
  const canOperate = useCan("operator");
  const [enrolling, setEnrolling] = useState(false);
  const [addingNode, setAddingNode] = useState(false);
  const [addedNode, setAddedNode] = useState<PerfsonarNode | null>(null);
  return (
    <section>
      <div className="page-heading">
        <h1>Agents</h1>
        {canOperate && !enrolling && (
          <button
            type="button"
            className="primary"
            onClick={() => {
              setEnrolling(true);
            }}
          >
            Enrol an agent
          </button>
        )}
        {canOperate && !addingNode && (
          <button
            type="button"
            onClick={() => {
              setAddingNode(true);
              setAddedNode(null);
            }}
          >
            Add perfSONAR node
          </button>
        )}
      </div>
      {canOperate && addingNode && (
        <Panel title="Add perfSONAR node">
          <AddNodeForm
            onAdded={(node) => {
              setAddedNode(node);
              setAddingNode(false);
            }}
            onClose={() => {
              setAddingNode(false);
            }}
          />
        </Panel>
      )}
      {addedNode !== null && (
        <NodeAddedNotice
          node={addedNode}
          onDone={() => {
            setAddedNode(null);
          }}
        />
      )}
      {canOperate && enrolling && (
        <Panel title="Enrol an agent">
          <EnrolAgent
            onClose={() => {
              setEnrolling(false);
            }}
          />
        </Panel>
      )}
      <AgentList canOperate={canOperate} />
      {canOperate && (
        <Panel title="Enrolment tokens">
          <EnrollmentTokens />
        </Panel>
      )}
    </section>
  );
}
