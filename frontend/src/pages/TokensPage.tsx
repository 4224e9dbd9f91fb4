import { useState } from "react";

import {
  useApiTokens,
  useChangePassword,
  useCreateApiToken,
  useRevokeApiToken,
  type ApiToken,
  type ApiTokenScope,
  type IssuedApiToken,
} from "../api/agentQueries";
import { useChoices, useMe } from "../api/queries";
import { ConfirmButton } from "../components/ConfirmButton";
import { Field, TextField } from "../components/Field";
import { FormError } from "../components/FormErrors";
import { OnceSecret } from "../components/OnceSecret";
import { Panel } from "../components/Panel";
import { LoadError, Loading } from "../components/QueryState";
import { ChoiceBadge } from "../components/StatusBadge";
import { curlExample } from "../lib/commands";
import { API_TOKEN_EXPIRIES, apiTokenExpiresAt, type ApiTokenExpiry } from "../lib/expiry";
import { formatAgo, formatUtc } from "../lib/format";
import { splitErrors } from "../lib/formErrors";
import { useCan } from "../lib/roles";

const TOKEN_FIELDS = ["name", "scope", "expires_at"] as const;
const PASSWORD_FIELDS = ["current_password", "new_password"] as const;

/** The signed-in person's own password; the new one is typed twice, and checked here first. */
function ChangePassword({ username }: { username: string | undefined }) {
  const [current, setCurrent] = useState("");
  const [password, setPassword] = useState("");
  const [repeat, setRepeat] = useState("");
  // The repetition is checked from the first press of the button, not while it is typed.
  const [submitted, setSubmitted] = useState(false);
  const change = useChangePassword();
  const errors = splitErrors(change.error, PASSWORD_FIELDS);
  const mismatch = submitted && repeat !== password ? "does not match the new password" : undefined;
  return (
    <form
      className="stacked-form"
      aria-label="Change your password"
      onSubmit={(event) => {
        event.preventDefault();
        setSubmitted(true);
        if (repeat !== password) {
          return;
        }
        change.mutate(
          { current_password: current, new_password: password },
          {
            onSuccess: () => {
              setCurrent("");
              setPassword("");
              setRepeat("");
              setSubmitted(false);
            },
          },
        );
      }}
    >
      {/* For password managers: whose password this is. */}
      {username !== undefined && <input type="text" autoComplete="username" value={username} readOnly hidden />}
      <TextField
        label="Current password"
        error={errors.fields.current_password}
        type="password"
        autoComplete="current-password"
        value={current}
        onChange={setCurrent}
      />
      <TextField
        label="New password"
        error={errors.fields.new_password}
        hint="At least 8 characters, not a common one, not like your username."
        type="password"
        autoComplete="new-password"
        value={password}
        onChange={setPassword}
      />
      <TextField
        label="Repeat the new password"
        error={mismatch}
        type="password"
        autoComplete="new-password"
        value={repeat}
        onChange={setRepeat}
      />
      <FormError message={errors.general} />
      <div className="buttons">
        <button
          type="submit"
          className="primary"
          disabled={change.isPending || current === "" || password === "" || repeat === ""}
        >
          Change password
        </button>
      </div>
      {change.isSuccess && (
        <p role="status">Your password is changed. Your other sessions are signed out; this one stays signed in.</p>
      )}
    </form>
  );
}

function IssuedToken({ issued, onDone }: { issued: IssuedApiToken; onDone: () => void }) {
  return (
    <OnceSecret
      title={`New API token “${issued.name}”`}
      secret={issued.token}
      command={curlExample(window.location.origin, issued.token)}
      commandLabel="Try it:"
      onDone={onDone}
    >
      <p className="muted">
        {issued.scope === "read" ? "Read-only: it can list and fetch, never change." : "Read and write, with your role's rights."}{" "}
        {`Expires ${formatUtc(issued.expires_at)}.`}
      </p>
    </OnceSecret>
  );
}

function CreateToken() {
  const [name, setName] = useState("");
  const [scope, setScope] = useState<ApiTokenScope>("read");
  const [expiry, setExpiry] = useState<ApiTokenExpiry>("90d");
  const [date, setDate] = useState("");
  const [dateMissing, setDateMissing] = useState(false);
  const create = useCreateApiToken();
  const errors = splitErrors(create.error, TOKEN_FIELDS);

  if (create.data !== undefined) {
    return (
      <IssuedToken
        issued={create.data}
        onDone={() => {
          create.reset();
          setName("");
        }}
      />
    );
  }
  return (
    <form
      className="stacked-form"
      onSubmit={(event) => {
        event.preventDefault();
        const expiresAt = apiTokenExpiresAt(expiry, date);
        setDateMissing(expiresAt === undefined);
        if (expiresAt !== undefined) {
          create.mutate({ name: name.trim(), scope, expires_at: expiresAt });
        }
      }}
    >
      <TextField
        label="Name"
        error={errors.fields.name}
        value={name}
        placeholder="grafana, nightly report"
        onChange={setName}
      />
      <Field label="Scope" error={errors.fields.scope}>
        {(props) => (
          <select
            {...props}
            value={scope}
            onChange={(event) => {
              setScope(event.target.value as ApiTokenScope);
            }}
          >
            <option value="read">read: list and fetch only</option>
            <option value="write">write: also change, as your role may</option>
          </select>
        )}
      </Field>
      <Field label="Expires" error={expiry === "date" ? undefined : errors.fields.expires_at}>
        {(props) => (
          <select
            {...props}
            value={expiry}
            onChange={(event) => {
              setExpiry(event.target.value as ApiTokenExpiry);
              setDateMissing(false);
            }}
          >
            {API_TOKEN_EXPIRIES.map((choice) => (
              <option key={choice.value} value={choice.value}>
                {choice.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      {expiry === "date" && (
        <TextField
          label="Expiry date (UTC)"
          error={dateMissing ? "pick a date" : errors.fields.expires_at}
          type="date"
          value={date}
          onChange={(value) => {
            setDate(value);
            setDateMissing(false);
          }}
        />
      )}
      <FormError message={errors.general} />
      <div className="buttons">
        <button type="submit" className="primary" disabled={create.isPending || name.trim() === ""}>
          Create token
        </button>
      </div>
    </form>
  );
}

function TokenRow({
  token,
  everyone,
  canRevoke,
  scopes,
  states,
}: {
  token: ApiToken;
  everyone: boolean;
  canRevoke: boolean;
  scopes: Parameters<typeof ChoiceBadge>[0]["choices"];
  states: Parameters<typeof ChoiceBadge>[0]["choices"];
}) {
  const revoke = useRevokeApiToken();
  const error = splitErrors(revoke.error, []).general;
  return (
    <tr className={token.state === "active" ? undefined : "disabled"}>
      {everyone && <td>{token.user}</td>}
      <td>
        <strong>{token.name}</strong>
      </td>
      <td>
        <code>{token.prefix}…</code>
      </td>
      <td>
        <ChoiceBadge choices={scopes} value={token.scope} />
      </td>
      <td className="nowrap">{formatUtc(token.created_at)}</td>
      <td className="nowrap">{formatUtc(token.expires_at)}</td>
      <td className="nowrap" title={formatUtc(token.last_used_at)}>
        {formatAgo(token.last_used_at)}
      </td>
      <td>
        <ChoiceBadge choices={states} value={token.state} />
      </td>
      <td>
        {canRevoke && token.state === "active" && (
          <ConfirmButton
            label="Revoke"
            question={`Revoke “${token.name}”? Anything using it is refused from now on.`}
            disabled={revoke.isPending}
            onConfirm={() => {
              revoke.mutate(token.id);
            }}
          />
        )}
        <FormError message={error} />
      </td>
    </tr>
  );
}

function TokenList({ everyone }: { everyone: boolean }) {
  const tokens = useApiTokens(everyone);
  const choices = useChoices();
  const me = useMe();
  const isAdmin = useCan("admin");
  if (tokens.isPending) {
    return <Loading what="API tokens" />;
  }
  if (tokens.isError) {
    return <LoadError what="API tokens" error={tokens.error} />;
  }
  if (tokens.data.length === 0) {
    return (
      <p className="muted">
        {everyone ? "Nobody has an API token." : "You have no API tokens. Create one below for scripts and dashboards."}
      </p>
    );
  }
  return (
    <table>
      <thead>
        <tr>
          {everyone && <th>Person</th>}
          <th>Name</th>
          <th>Token</th>
          <th>Scope</th>
          <th>Created</th>
          <th>Expires</th>
          <th>Last used</th>
          <th>State</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {tokens.data.map((token) => (
          <TokenRow
            key={token.id}
            token={token}
            everyone={everyone}
            canRevoke={isAdmin || token.user === me.data?.username}
            scopes={choices.data?.token_scope}
            states={choices.data?.token_state}
          />
        ))}
      </tbody>
    </table>
  );
}

/**
 * /tokens, "Your account": the signed-in person's password, and their personal API tokens
 * (Authorization: Bearer), shown once when made; admins see everyone's tokens.
 */
export function TokensPage() {
  const me = useMe();
  const isAdmin = useCan("admin");
  const [everyone, setEveryone] = useState(false);
  const all = isAdmin && everyone;
  return (
    <section>
      <h1>Your account</h1>
      <p className="muted">Your password, and the API tokens your scripts and dashboards sign in with.</p>
      <Panel title="Your password">
        <ChangePassword username={me.data?.username} />
      </Panel>
      <Panel title={all ? "Everyone's tokens" : "Your tokens"}>
        <p className="muted">
          Scripts send <code>Authorization: Bearer fpt_…</code>. A token acts as you: it has your role, and a read
          token can never change anything.
        </p>
        {isAdmin && (
          <p>
            <label className="toggle">
              <input
                type="checkbox"
                checked={everyone}
                onChange={(event) => {
                  setEveryone(event.target.checked);
                }}
              />{" "}
              Everyone&apos;s tokens
            </label>
          </p>
        )}
        <TokenList everyone={all} />
      </Panel>
      <Panel title="Create a token">
        <CreateToken />
      </Panel>
    </section>
  );
}
