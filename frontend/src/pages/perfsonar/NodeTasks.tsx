import { useState } from "react";

import type { PerfsonarTask } from "../../api/perfsonar";
import { usePerfsonarTasks } from "../../api/perfsonarQueries";
import { LoadError, Loading } from "../../components/QueryState";
import { formatUtc } from "../../lib/format";
import { testKind } from "../../lib/testKinds";
import "./perfsonar.css";

/** "athens → ps-lon" for a path between two members, "athens → example.org" towards a target. */
function taskPath(task: PerfsonarTask): string {
  return `${task.source_name} → ${task.destination_name ?? task.target}`;
}

/** "tasks/4c825357…": the task's id is what tells tasks apart; the link and its title hold the URL. */
function shortTaskUrl(url: string): string {
  const id = url.replace(/\/+$/, "").split("/").pop() ?? url;
  return id.length > 8 ? `tasks/${id.slice(0, 8)}…` : `tasks/${id}`;
}

function TaskRow({ task }: { task: PerfsonarTask }) {
  return (
    <tr>
      <td>{testKind(task.test_type).label}</td>
      <td>{task.mesh === null ? <span className="muted">–</span> : `${task.mesh}/${task.test ?? ""}`}</td>
      <td className="nowrap">{taskPath(task)}</td>
      <td>
        <span className="task-state" data-state={task.state}>
          {task.state}
        </span>
      </td>
      <td>{task.reason === "" ? <span className="muted">–</span> : task.reason}</td>
      <td className="nowrap">
        {task.url === "" ? (
          <span className="muted">
            {task.state === "unanswered" ? "unknown: asked on the next sync" : "not created"}
          </span>
        ) : (
          <a href={task.url} target="_blank" rel="noreferrer" title={task.url}>
            <code>{shortTaskUrl(task.url)}</code>
          </a>
        )}
      </td>
      <td className="nowrap">{formatUtc(task.starts_at)}</td>
      <td className="nowrap">{formatUtc(task.until)}</td>
    </tr>
  );
}

/** The pScheduler tasks Fathom keeps on one node: what each measures, its state and why. */
export function NodeTasks({ name }: { name: string }) {
  const tasks = usePerfsonarTasks(name);
  const [showDeleted, setShowDeleted] = useState(false);
  if (tasks.isPending) {
    return <Loading what={`the tasks of ${name}`} />;
  }
  if (tasks.isError) {
    return <LoadError what={`the tasks of ${name}`} error={tasks.error} />;
  }
  const deleted = tasks.data.filter((task) => task.state === "deleted").length;
  const shown = showDeleted ? tasks.data : tasks.data.filter((task) => task.state !== "deleted");
  return (
    <section className="node-tasks" aria-label={`Tasks on ${name}`}>
      <div className="toolbar">
        <strong>pScheduler tasks on {name}</strong>
        {deleted > 0 && (
          <label className="toggle">
            <input
              type="checkbox"
              checked={showDeleted}
              onChange={(event) => {
                setShowDeleted(event.target.checked);
              }}
            />{" "}
            Show deleted ({deleted})
          </label>
        )}
      </div>
      {shown.length === 0 ? (
        <p className="muted">
          No tasks on {name}. Fathom creates them for each mesh test this node leads: add it to a mesh.
        </p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Test</th>
              <th>Mesh test</th>
              <th>Path</th>
              <th>State</th>
              <th>Reason</th>
              <th>Task</th>
              <th>Starts</th>
              <th>Until</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((task) => (
              <TaskRow key={task.id} task={task} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
