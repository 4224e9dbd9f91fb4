import type { MeshTest } from "../api/queries";
import { testSchedule } from "../lib/schedule";
import { testKind } from "../lib/testKinds";

/**
 * A mesh's tests in a table cell, one a line: the kind, how often, the test's name where it
 * is not the kind's, and with `withOptions` the options it sets.
 */
export function MeshTestList({ tests, withOptions = false }: { tests: readonly MeshTest[]; withOptions?: boolean }) {
  if (tests.length === 0) {
    return <span className="muted">no tests</span>;
  }
  return (
    <ul className="tests">
      {tests.map((test) => {
        const kind = testKind(test.test_type);
        const options = withOptions ? kind.summarizeSpec(test.spec) : [];
        return (
          <li key={test.name} className={test.enabled === false ? "disabled" : undefined}>
            <strong>{kind.label}</strong> {testSchedule(test)}
            {withOptions && (
              <span className="muted"> · {options.length > 0 ? options.join(", ") : "default options"}</span>
            )}
            {test.name !== test.test_type && <span className="muted"> ({test.name})</span>}
            {test.enabled === false && <span className="flag"> disabled</span>}
          </li>
        );
      })}
    </ul>
  );
}
