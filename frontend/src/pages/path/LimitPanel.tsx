// "What limits this path": the path's label (the consensus of its recent runs), the newest
// run's diagnosis with its evidence, and the four ceiling terms with today's tuning (link,
// receive window, send buffer, loss) with the buffer sizes behind the window terms.
import type {
  Buffers,
  CeilingSet,
  CeilingTerm,
  Choice,
  PathAnalysis,
  PathLabel,
  RunAnalysis,
  RunCeilings,
  StreamsProbe,
  TermName,
} from "../../api/queries";
import { Panel } from "../../components/Panel";
import { ChoiceBadge } from "../../components/StatusBadge";
import {
  TERM_NAMES,
  TERM_TITLES,
  formatFraction,
  memberScaleNote,
  memberSentence,
  termTitle,
} from "../../lib/analysis";
import { formatBytes, formatMs, formatPercent, formatRate, formatUtc } from "../../lib/format";
import { AnalysisState, NO_RUN_HINT, type AnalysisQuery } from "./AnalysisState";

/** Which ECMP member the run's flow took, and why a slower member's rate is not a drop. */
function MemberNote({ run }: { run: RunAnalysis }) {
  const sentence = memberSentence(run);
  if (sentence === null) {
    return null;
  }
  const scale = memberScaleNote(run);
  return (
    <p className="member" role="note">
      The newest run was {sentence}.{scale !== null && <span className="muted"> {scale}</span>}
    </p>
  );
}

/** The path's label: the most common diagnosis of its recent runs, and how many agree. */
function PathLabelLine({ label, diagnoses }: { label: PathLabel; diagnoses: readonly Choice[] | undefined }) {
  return (
    <p className="path-label">
      <strong>This path: </strong>
      <ChoiceBadge choices={diagnoses} value={label.diagnosis} />{" "}
      <span className="muted">
        {`${label.agreeing_runs} of ${label.runs} recent ${label.runs === 1 ? "run" : "runs"} (${formatPercent(label.share)})`}
      </span>
    </p>
  );
}

function RunSummary({ run, diagnoses }: { run: RunAnalysis; diagnoses: readonly Choice[] | undefined }) {
  const { evidence: sentences, not_converged: notConverged } = run.evidence;
  const member = run.ceilings.member;
  return (
    <>
      <p>
        <ChoiceBadge choices={diagnoses} value={run.diagnosis} />{" "}
        <span className="muted">
          newest run {formatUtc(run.started_at)}, {run.streams} {run.streams === 1 ? "stream" : "streams"}
          {run.iperf3_version !== "" && `, iperf3 ${run.iperf3_version}`}
        </span>
      </p>
      <dl className="figures">
        <div>
          <dt>Rate</dt>
          <dd>{formatRate(run.rate_bps)}</dd>
        </div>
        <div>
          <dt>{member === null ? "Ceiling" : `Ceiling of member ${member.index}`}</dt>
          <dd>{formatRate(run.ceiling_bps)}</dd>
        </div>
        <div>
          <dt>{member === null ? "Share of ceiling" : "Share of member's ceiling"}</dt>
          <dd>{formatPercent(run.fraction_of_ceiling)}</dd>
        </div>
        <div>
          <dt>Smallest term</dt>
          <dd>{termTitle(run.limit)}</dd>
        </div>
      </dl>
      <MemberNote run={run} />
      {notConverged && (
        <p className="warning" role="note">
          The rate was still rising at the end of the run: it may be too short to leave slow start. Lengthen the
          throughput test&apos;s <code>duration_s</code> or its <code>omit_s</code>.
        </p>
      )}
      {sentences.length > 0 ? (
        <ul className="evidence">
          {sentences.map((sentence, index) => (
            <li key={index}>{sentence}</li>
          ))}
        </ul>
      ) : (
        <p className="muted">The diagnosis came with no evidence sentences.</p>
      )}
    </>
  );
}

/** One term for a table cell: its rate, or why it is unknown. */
function termText(term: CeilingTerm): string {
  if (term.rate_bps !== null) {
    return formatRate(term.rate_bps);
  }
  return term.reason === "" ? "unknown" : `unknown — ${term.reason}`;
}

function TermRow({
  name,
  atMinRtt,
  underLoad,
}: {
  name: TermName;
  atMinRtt: CeilingSet;
  underLoad: CeilingSet | null;
}) {
  const winning = atMinRtt.limit === name;
  return (
    <tr className={winning ? "winning" : undefined} data-term={name}>
      <th scope="row">
        {TERM_TITLES[name]}
        {winning && <span className="flag"> limits</span>}
      </th>
      <td>{termText(atMinRtt.terms[name])}</td>
      {underLoad !== null && <td>{termText(underLoad.terms[name])}</td>}
    </tr>
  );
}

function rttHeading(set: CeilingSet): string {
  return set.rtt_ms === null ? "unknown RTT" : formatMs(set.rtt_ms);
}

function BufferRows({ buffers }: { buffers: Buffers }) {
  const rows: [string, string, string][] = [
    [
      "Receive buffer",
      buffers.receive_bytes === null ? "unknown" : formatBytes(buffers.receive_bytes),
      buffers.receive_source,
    ],
    ["Receive window fraction", formatFraction(buffers.receive_fraction), buffers.receive_fraction_source],
    ["Send buffer", buffers.send_bytes === null ? "unknown" : formatBytes(buffers.send_bytes), buffers.send_source],
    ["Send window fraction", formatFraction(buffers.send_fraction), buffers.send_fraction_source],
  ];
  return (
    <>
      {rows.map(([what, value, source]) => (
        <tr key={what}>
          <th scope="row">{what}</th>
          <td>{value}</td>
          <td className="muted">{source === "" ? "source not reported" : source}</td>
        </tr>
      ))}
    </>
  );
}

function CeilingsNow({ now }: { now: RunCeilings }) {
  const { at_min_rtt: atMinRtt, under_load: underLoad } = now;
  return (
    <>
      <h3>Ceilings with today&apos;s tuning</h3>
      {atMinRtt.limit === "unknown" && (
        <p className="warning" role="note">
          Every term is unknown, so nothing says what limits this path yet; each row says what is missing. The terms
          come from the agents&apos; host facts (link speed, MTU, <code>tcp_rmem</code>/<code>tcp_wmem</code>) and the
          path&apos;s pings: check the Agents page for missing host facts.
        </p>
      )}
      <table className="terms">
        <thead>
          <tr>
            <th>Term</th>
            <th>
              At {rttHeading(atMinRtt)}{" "}
              <span className="muted">
                ({atMinRtt.rtt_source === "" ? "RTT source not reported" : atMinRtt.rtt_source})
              </span>
            </th>
            {underLoad !== null && (
              <th>
                Under load, at {rttHeading(underLoad)} <span className="muted">({underLoad.rtt_source})</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {TERM_NAMES.map((name) => (
            <TermRow key={name} name={name} atMinRtt={atMinRtt} underLoad={underLoad} />
          ))}
        </tbody>
      </table>
      <h3>Where the window terms come from</h3>
      <table className="buffers">
        <tbody>
          <BufferRows buffers={now.buffers} />
        </tbody>
      </table>
    </>
  );
}

/** One stream against several: the newest probe the server planned beside the single-stream runs. */
function StreamsProbeLine({ probe }: { probe: StreamsProbe }) {
  return (
    <p className="streams-probe" role="note" data-kind={probe.kind}>
      <strong>1 vs {probe.streams} streams: </strong>
      {probe.text}{" "}
      <span className="muted">
        (probe at {formatUtc(probe.started_at)}, against {probe.single_runs} single-stream runs of the day before)
      </span>
    </p>
  );
}

function Limits({ data, diagnoses }: { data: PathAnalysis; diagnoses: readonly Choice[] | undefined }) {
  const newest = data.runs[0];
  const now = data.ceilings_now;
  return (
    <>
      {data.path_label !== null && <PathLabelLine label={data.path_label} diagnoses={diagnoses} />}
      {newest === undefined ? <p className="muted">{NO_RUN_HINT}</p> : <RunSummary run={newest} diagnoses={diagnoses} />}
      {data.streams_probe !== null && <StreamsProbeLine probe={data.streams_probe} />}
      {now === null ? (
        newest !== undefined && (
          <p className="muted">
            No ceilings with today&apos;s tuning: the server could not compute them from the newest run. They return
            once the next throughput run is analysed.
          </p>
        )
      ) : (
        <CeilingsNow now={now} />
      )}
    </>
  );
}

export function LimitPanel({
  analysis,
  diagnoses,
}: {
  analysis: AnalysisQuery;
  diagnoses: readonly Choice[] | undefined;
}) {
  return (
    <Panel title="What limits this path">
      <AnalysisState analysis={analysis} what="the diagnosis">
        {(data) => <Limits data={data} diagnoses={diagnoses} />}
      </AnalysisState>
    </Panel>
  );
}
