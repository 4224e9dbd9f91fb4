import { useState } from "react";

import { useCreatePerson, usePeople, useUpdatePerson, type Person } from "../api/agentQueries";
import { useChoices, useMe, type Choice } from "../api/queries";
import { Field, TextField } from "../components/Field";
import { FieldError, FormError } from "../components/FormErrors";
import { Panel } from "../components/Panel";
import { LoadError, Loading } from "../components/QueryState";
import { formatAgo, formatUtc } from "../lib/format";
import { splitErrors } from "../lib/formErrors";
import { ROLES, useCan, type Role } from "../lib/roles";

/** Role options as the server labels them, in rank order; the bare values until choices load. */
function roleOptions(choices: readonly Choice[] | undefined): { value: Role; label: string }[] {
  return ROLES.map((role) => ({ value: role, label: choices?.find((choice) => choice.value === role)?.label ?? role }));
}

const ROLE_HELP = "Viewers read everything; operators also run meshes, agents, incidents and silences; admins also manage people, rules, channels and the audit log.";

const PERSON_FIELDS = ["username", "email", "password", "role"] as const;

function AddPerson({ roles }: { roles: { value: Role; label: string }[] }) {
  const [username, setUsername] = useState("");
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [role, setRole] = useState<Role>("viewer");
  const create = useCreatePerson();
  const errors = splitErrors(create.error, PERSON_FIELDS);
  return (
    <form
      className="stacked-form"
      onSubmit={(event) => {
        event.preventDefault();
        create.mutate(
          { username: username.trim(), email: email.trim(), password, role },
          {
            onSuccess: () => {
              setUsername("");
              setEmail("");
              setPassword("");
              setRole("viewer");
            },
          },
        );
      }}
    >
      <TextField
        label="Username"
        error={errors.fields.username}
        value={username}
        autoComplete="off"
        onChange={setUsername}
      />
      <TextField
        label="Email"
        error={errors.fields.email}
        type="email"
        value={email}
        placeholder="optional"
        onChange={setEmail}
      />
      <TextField
        label="Initial password"
        error={errors.fields.password}
        hint="They can change it after signing in."
        type="password"
        value={password}
        autoComplete="new-password"
        onChange={setPassword}
      />
      <Field label="Role" error={errors.fields.role}>
        {(props) => (
          <select
            {...props}
            value={role}
            onChange={(event) => {
              setRole(event.target.value as Role);
            }}
          >
            {roles.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <FormError message={errors.general} />
      <div className="buttons">
        <button type="submit" className="primary" disabled={create.isPending || username.trim() === "" || password === ""}>
          Add person
        </button>
      </div>
      {create.isSuccess && <p role="status">Added {create.data.username}. Give them the password by a separate channel.</p>}
    </form>
  );
}

function PersonRow({ person, isMe, roles }: { person: Person; isMe: boolean; roles: { value: Role; label: string }[] }) {
  const update = useUpdatePerson();
  const active = person.is_active !== false;
  const errors = splitErrors(update.error, ["role", "is_active"]);
  return (
    <tr className={active ? undefined : "disabled"}>
      <td>
        <strong>{person.username}</strong>
        {isMe && <span className="muted"> (you)</span>}
      </td>
      <td>{person.email === undefined || person.email === "" ? "–" : person.email}</td>
      <td>
        <select
          aria-label={`Role of ${person.username}`}
          value={person.role}
          disabled={update.isPending}
          aria-invalid={errors.fields.role !== undefined}
          onChange={(event) => {
            update.mutate({ id: person.id, patch: { role: event.target.value as Role } });
          }}
        >
          {roles.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
        <FieldError message={errors.fields.role} />
      </td>
      <td>
        {active ? "active" : <span className="flag">disabled</span>}{" "}
        <button
          type="button"
          disabled={update.isPending}
          onClick={() => {
            update.mutate({ id: person.id, patch: { is_active: !active } });
          }}
        >
          {active ? "Disable" : "Enable"}
        </button>
        <FieldError message={errors.fields.is_active} />
        <FormError message={errors.general} />
      </td>
      <td className="nowrap" title={formatUtc(person.last_login)}>
        {formatAgo(person.last_login)}
      </td>
      <td className="nowrap">{formatUtc(person.date_joined)}</td>
    </tr>
  );
}

function PeopleTable({ roles }: { roles: { value: Role; label: string }[] }) {
  const people = usePeople();
  const me = useMe();
  if (people.isPending) {
    return <Loading what="people" />;
  }
  if (people.isError) {
    return <LoadError what="people" error={people.error} />;
  }
  if (people.data.length === 0) {
    return <p className="muted">Nobody yet: add a person below.</p>;
  }
  return (
    <table>
      <thead>
        <tr>
          <th>Username</th>
          <th>Email</th>
          <th>Role</th>
          <th>Active</th>
          <th>Last sign-in</th>
          <th>Joined</th>
        </tr>
      </thead>
      <tbody>
        {people.data.map((person) => (
          <PersonRow key={person.id} person={person} isMe={person.username === me.data?.username} roles={roles} />
        ))}
      </tbody>
    </table>
  );
}

/** Who may sign in, and with which role (admins). */
export function PeoplePage() {
  const isAdmin = useCan("admin");
  const choices = useChoices();
  const roles = roleOptions(choices.data?.role);
  if (!isAdmin) {
    return (
      <section>
        <h1>People</h1>
        <p className="muted">Only admins manage people.</p>
      </section>
    );
  }
  return (
    <section>
      <h1>People</h1>
      <p className="muted">{ROLE_HELP}</p>
      <Panel title="People">
        <PeopleTable roles={roles} />
      </Panel>
      <Panel title="Add a person">
        <AddPerson roles={roles} />
      </Panel>
    </section>
  );
}
