import type { PerfsonarNode } from "../../api/perfsonar";
import { formatAgo, formatUtc } from "../../lib/format";
import { formatClockOffset, isClockSkewed, shortFingerprint, tlsModeLabel } from "./nodes";
import "./perfsonar.css";

function When({ at }: { at: string | null | undefined }) {
  return <span title={formatUtc(at)}>{formatAgo(at)}</span>;
}

function WordList({ words, none }: { words: readonly string[]; none: string }) {
  if (words.length === 0) {
    return <span className="muted">{none}</span>;
  }
  return (
    <span className="word-list">
      {words.map((word) => (
        <code key={word}>{word}</code>
      ))}
    </span>
  );
}

/** Reachable, unreachable or not checked yet, from the node's last check. */
export function Reachability({ node }: { node: PerfsonarNode }) {
  const reachable = node.reachable ?? null;
  const text = reachable === null ? "not checked" : reachable ? "reachable" : "unreachable";
  return (
    <span className="reachability" data-reachable={String(reachable)}>
      {text}
    </span>
  );
}

/** The node's clock against Fathom's; red beyond ±1 s, where pScheduler's schedules go wrong. */
export function ClockOffset({ node }: { node: PerfsonarNode }) {
  const skewed = isClockSkewed(node.clock_offset_s);
  return (
    <span className={skewed ? "flag" : undefined} data-testid="clock-offset">
      {formatClockOffset(node.clock_offset_s)}
      {node.clock_synchronized === false && " (not synchronized)"}
    </span>
  );
}

/** How Fathom verifies the node's certificate; a pinned fingerprint shortened (the full one on hover). */
export function TlsSummary({ node }: { node: PerfsonarNode }) {
  return (
    <>
      {tlsModeLabel(node.tls_mode)}
      {node.tls_mode === "pinned" && node.pinned_sha256 !== "" && (
        <>
          {" "}
          <code title={node.pinned_sha256}>{shortFingerprint(node.pinned_sha256)}</code>
        </>
      )}
      {node.tls_mode === "ca_bundle" && !node.has_ca_bundle && <span className="flag"> (no bundle given)</span>}
    </>
  );
}

/** What Fathom knows of one node: how it reaches it and what the last check, push and poll found. */
export function NodeDetails({ node }: { node: PerfsonarNode }) {
  return (
    <div className="node-details">
      <dl className="figures">
        <div>
          <dt>pScheduler API</dt>
          <dd>
            <code>{node.api_url}</code>
          </dd>
        </div>
        <div>
          <dt>TLS</dt>
          <dd>
            <TlsSummary node={node} />
          </dd>
        </div>
        <div>
          <dt>Host name</dt>
          <dd>{node.hostname === "" ? "–" : node.hostname}</dd>
        </div>
        <div>
          <dt>API level</dt>
          <dd>{node.api_level ?? "–"}</dd>
        </div>
        <div>
          <dt>Clock offset</dt>
          <dd>
            <ClockOffset node={node} />
          </dd>
        </div>
        <div>
          <dt>Tasks</dt>
          <dd>
            {node.tasks.active} active
            {node.tasks.refused > 0 && <span className="flag"> · {node.tasks.refused} refused</span>}
            {node.tasks.unanswered > 0 && (
              <span
                className="task-state"
                data-state="unanswered"
                title="Their POST got no answer: looked up on the node at the next sync"
              >
                {" "}
                · {node.tasks.unanswered} unanswered
              </span>
            )}
          </dd>
        </div>
        <div>
          <dt>Last check</dt>
          <dd>
            <When at={node.checked_at} />
          </dd>
        </div>
        <div>
          <dt>Last push</dt>
          <dd>
            <When at={node.last_push_at} />
          </dd>
        </div>
        <div>
          <dt>Last poll</dt>
          <dd>
            <When at={node.last_poll_at} />
          </dd>
        </div>
      </dl>
      <dl className="figures">
        <div>
          <dt>Tests</dt>
          <dd>
            <WordList words={node.tests} none="none reported" />
          </dd>
        </div>
        <div>
          <dt>Tools</dt>
          <dd>
            <WordList words={node.tools} none="none reported" />
          </dd>
        </div>
        <div>
          <dt>Archivers</dt>
          <dd>
            <WordList words={node.archivers} none="none reported" />
          </dd>
        </div>
      </dl>
      {node.last_error !== "" && (
        <p>
          <strong>Last error</strong> <span className="muted">({formatUtc(node.last_error_at)})</span>:{" "}
          <span className="error">{node.last_error}</span>
        </p>
      )}
    </div>
  );
}
