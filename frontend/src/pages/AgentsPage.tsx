import { Fragment, useState } from "react";

import { useAgents, type Agent } from "../api/queries";
import { LoadError, Loading } from "../components/QueryState";
import { StatusBadge } from "../components/StatusBadge";
import { formatAgo, formatBytes, formatLinkSpeed, formatUtc } from "../lib/format";
import { isByteSysctl, parseHostFacts, sysctlBytes, type HostFacts } from "../lib/hostFacts";

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

function AgentRow({ agent }: { agent: Agent }) {
  const [open, setOpen] = useState(false);
  const facts = parseHostFacts(agent.host_facts);
  return (
    <Fragment>
      <tr>
        <td>{agent.name}</td>
        <td>{agent.address}</td>
        <td>
          <StatusBadge choice={agent.status} />
        </td>
        <td title={formatUtc(agent.last_seen_at)}>{formatAgo(agent.last_seen_at)}</td>
        <td>{agent.agent_version ?? "–"}</td>
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
      </tr>
      {open && facts !== null && (
        <tr className="detail">
          <td colSpan={6}>
            <HostFactsPanel facts={facts} collectedAt={agent.host_facts_at ?? null} />
          </td>
        </tr>
      )}
    </Fragment>
  );
}

/** Every enrolled agent: is it alive, what runs it, how its TCP stack is tuned. */
export function AgentsPage() {
  const agents = useAgents();
  if (agents.isPending) {
    return <Loading what="agents" />;
  }
  if (agents.isError) {
    return <LoadError what="agents" error={agents.error} />;
  }
  return (
    <section>
      <h1>Agents</h1>
      {agents.data.length === 0 ? (
        <p className="muted">
          No agents yet. Create an enrolment token (<code>manage.py create_enrollment_token</code>) and
          run <code>fathom-agent enroll</code> on the endpoint.
        </p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Name</th>
              <th>Address</th>
              <th>Status</th>
              <th>Last seen</th>
              <th>Version</th>
              <th>Host</th>
            </tr>
          </thead>
          <tbody>
            {agents.data.map((agent) => (
              <AgentRow key={agent.id} agent={agent} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
