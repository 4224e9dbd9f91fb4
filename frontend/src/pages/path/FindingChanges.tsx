// What else changed when a finding's change began, from data Fathom already has: the path's
// other findings, the reverse direction's, either host's tuning and versions, and paths that
// share an agent or a traced router. A route change in the same minute explains an RTT step.
import { Link } from "react-router-dom";

import { useFindingChanges } from "../../api/findingQueries";
import type { Choices } from "../../api/queries";
import { LoadError, Loading } from "../../components/QueryState";
import { formatUtc } from "../../lib/format";
import { choiceFor } from "../../lib/schedule";
import { pathHref } from "../paths/pathHref";

export function FindingChanges({ findingId, choices }: { findingId: number; choices: Choices | undefined }) {
  const changes = useFindingChanges(findingId);
  if (changes.error) {
    return <LoadError what="what else changed" error={changes.error} />;
  }
  if (!changes.data) {
    return <Loading what="what else changed" />;
  }
  const { items } = changes.data;
  return (
    <section aria-label="What else changed" data-testid="finding-changes">
      <h3>What else changed</h3>
      <p className="muted">
        Between {formatUtc(changes.data.from)} and {formatUtc(changes.data.to)}
        {items.length === 0 &&
          ": nothing else Fathom measures. No other finding on this path, its reverse direction or a path sharing " +
            "an agent or a traced router, and no change of either host's tuning or versions."}
      </p>
      {items.length > 0 && (
        <ul>
          {items.map((item, index) => (
            <li key={`${item.relation}-${item.finding_id ?? index}`}>
              <span className="muted">
                {choiceFor(choices?.change_relation, item.relation)?.label ?? item.relation}, {formatUtc(item.at)}:
              </span>{" "}
              {item.finding_id !== null && item.source_id !== null && item.destination_id !== null ? (
                <Link
                  to={pathHref(
                    item.source_id,
                    item.destination_id,
                    item.family ?? 4,
                    new URLSearchParams({ finding: String(item.finding_id) }),
                  )}
                >
                  {item.sentence}
                </Link>
              ) : (
                item.sentence
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
