import { Panel } from "../components/Panel";
import { MeshesPanel } from "./schedule/MeshesPanel";
import { SlotsPanel } from "./schedule/SlotsPanel";
import { UtilizationPanel } from "./schedule/UtilizationPanel";

/** Exclusive (throughput) time: who is busy, what the meshes ask for, and which slots went wrong. */
export function SchedulePage() {
  return (
    <section>
      <h1>Schedule</h1>
      <p className="muted">
        Throughput tests (iperf3) are exclusive: the server plans them in time slots so that no agent is
        ever in two at once. Other tests run beside them.
      </p>
      <Panel title="Slots">
        <SlotsPanel />
      </Panel>
      <Panel title="Exclusive time per agent">
        <UtilizationPanel />
      </Panel>
      <Panel title="Meshes">
        <MeshesPanel />
      </Panel>
    </section>
  );
}
