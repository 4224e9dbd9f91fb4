// Enrolment: a token made and shown once with the command to run, and the tokens issued.
import { useState } from "react";

import {
  useCreateEnrollmentToken,
  useEnrollmentTokens,
  useRevokeEnrollmentToken,
  type IssuedEnrollmentToken,
} from "../../api/agentQueries";
import { ConfirmButton } from "../../components/ConfirmButton";
import { Field, TextField } from "../../components/Field";
import { FormError } from "../../components/FormErrors";
import { OnceSecret } from "../../components/OnceSecret";
import { LoadError, Loading } from "../../components/QueryState";
import { StatusBadge } from "../../components/StatusBadge";
import { enrollCommand } from "../../lib/commands";
import { ENROLMENT_EXPIRIES } from "../../lib/expiry";
import { formatAgo, formatUtc } from "../../lib/format";
import { splitErrors } from "../../lib/formErrors";

/** The origin agents enrol against: the one this UI is served from. */
function serverOrigin(): string {
  return window.location.origin;
}

/** A just-issued enrolment or re-key token, with the line to run on the endpoint. */
export function IssuedEnrolment({
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
export function EnrolAgent({ onClose }: { onClose: () => void }) {
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
        label="Addresses"
        hint="Only for the command line: the agent registers them when it enrols. A dual-stack host: its IPv4 and its IPv6, space-separated; each family is a path of its own."
        value={address}
        placeholder="198.18.1.2 2001:db8::2"
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

/** Enrolment and re-key tokens: who they are for, whether they are still usable, and revoke. */
export function EnrollmentTokens() {
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

