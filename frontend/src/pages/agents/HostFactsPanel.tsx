// An agent's host facts: the TCP tuning and interfaces it reported, as the ceilings read them,
// and its clock, which one-way delays to and from it depend on.
import { formatAgo, formatBytes, formatLinkSpeed, formatUtc } from "../../lib/format";
import { describeClock, isByteSysctl, sysctlBytes, type HostFacts } from "../../lib/hostFacts";

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
  const clock = describeClock(facts.clock);
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
        <div>
          <dt>Clock</dt>
          <dd className={clock.warning ? "flag" : undefined} data-testid="host-clock">
            {clock.text}
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

