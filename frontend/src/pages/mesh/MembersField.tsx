import { useState } from "react";

import type { Agent } from "../../api/queries";
import { LoadError, Loading } from "../../components/QueryState";
import { StatusBadge } from "../../components/StatusBadge";
import { withMember, withSide, type MemberSide, type MeshDraft } from "../../lib/meshEditor";
import { isSelectableAgent, memberErrors, type FieldErrors } from "../../lib/meshErrors";
import { FieldError } from "../../components/FormErrors";

/** Past this many agents the list gets a filter box. */
const FILTER_FROM = 8;

interface Row {
  name: string;
  agent: Agent | null;
}

/**
 * Which agents take part: a checkbox per active agent, and for a disjoint mesh the side each
 * is on. A member that is no longer active (revoked, decommissioned, gone) stays listed so
 * it can be removed.
 */
export function MembersField({
  draft,
  agents,
  errors,
  canEdit,
  onChange,
}: {
  draft: MeshDraft;
  agents: { data: Agent[] | undefined; error: Error | null; isPending: boolean };
  errors: FieldErrors;
  canEdit: boolean;
  onChange: (members: MeshDraft["members"]) => void;
}) {
  const [filter, setFilter] = useState("");
  if (agents.isPending) {
    return <Loading what="agents" />;
  }
  if (agents.data === undefined) {
    return agents.error === null ? null : <LoadError what="agents" error={agents.error} />;
  }
  const disjoint = draft.kind === "disjoint";
  const byName = new Map(agents.data.map((agent) => [agent.name, agent]));
  const members = new Map(draft.members.map((member) => [member.agent, member]));
  const rows: Row[] = agents.data
    .filter(isSelectableAgent)
    .map((agent): Row => ({ name: agent.name, agent }))
    .concat(
      draft.members
        .filter((member) => {
          const agent = byName.get(member.agent);
          return agent === undefined || !isSelectableAgent(agent);
        })
        .map((member) => ({ name: member.agent, agent: byName.get(member.agent) ?? null })),
    )
    .sort((a, b) => a.name.localeCompare(b.name));
  const needle = filter.trim().toLowerCase();
  const shown = needle === "" ? rows : rows.filter((row) => row.name.toLowerCase().includes(needle));
  const problems = memberErrors(errors, draft);
  const sideCount = (side: MemberSide) => draft.members.filter((member) => member.side === side).length;

  return (
    <>
      <p className="muted">
        {disjoint
          ? `${sideCount("a")} on side A, ${sideCount("b")} on side B: every A tests to every B${
              draft.unidirectional ? "" : " and back"
            }.`
          : `${draft.members.length} of ${rows.length} agents selected.`}
      </p>
      {rows.length === 0 && (
        <p className="muted">
          No active agents yet: enrol one on the Agents page, then add it here.
        </p>
      )}
      {rows.length > FILTER_FROM && (
        <label className="members-filter">
          Filter agents{" "}
          <input
            type="search"
            value={filter}
            onChange={(event) => {
              setFilter(event.target.value);
            }}
          />
        </label>
      )}
      {rows.length > 0 && (
        <table className="members">
          <thead>
            <tr>
              <th>Member</th>
              {disjoint && <th>Side</th>}
              <th>Status</th>
              <th>Address</th>
            </tr>
          </thead>
          <tbody>
            {shown.map(({ name, agent }) => {
              const member = members.get(name);
              const active = agent !== null && isSelectableAgent(agent);
              return (
                <tr key={name} className={member === undefined ? undefined : "selected"}>
                  <td>
                    <label>
                      <input
                        type="checkbox"
                        checked={member !== undefined}
                        // A member that is not active can only leave.
                        disabled={!canEdit || (!active && member === undefined)}
                        onChange={(event) => {
                          onChange(withMember(draft.members, name, event.target.checked, member?.side));
                        }}
                      />{" "}
                      {name}
                    </label>
                    {!active && <span className="flag"> not active: remove it</span>}
                    <FieldError message={problems[name]} quiet />
                  </td>
                  {disjoint && (
                    <td>
                      {member !== undefined && (
                        <label>
                          <span className="visually-hidden">Side of {name}</span>
                          <select
                            value={member.side}
                            disabled={!canEdit}
                            onChange={(event) => {
                              onChange(withSide(draft.members, name, event.target.value === "b" ? "b" : "a"));
                            }}
                          >
                            <option value="a">A</option>
                            <option value="b">B</option>
                          </select>
                        </label>
                      )}
                    </td>
                  )}
                  <td>{agent === null ? <span className="muted">unknown agent</span> : <StatusBadge choice={agent.status} />}</td>
                  <td>{agent?.address ?? "–"}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <FieldError message={errors.members} quiet />
    </>
  );
}
