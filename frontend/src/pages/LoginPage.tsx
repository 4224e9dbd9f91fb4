import { useState, type SyntheticEvent } from "react";
import { useNavigate, useSearchParams } from "react-router-dom";

import { useLogin } from "../api/queries";

/** Only same-site paths are followed after login, never an absolute URL from the query. */
export function safeNext(next: string | null): string {
  return next !== null && next.startsWith("/") && !next.startsWith("//") ? next : "/paths";
}

export function LoginPage() {
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const login = useLogin();
  const navigate = useNavigate();
  const [params] = useSearchParams();

  const submit = (event: SyntheticEvent<HTMLFormElement>) => {
    event.preventDefault();
    login.mutate(
      { username, password },
      {
        onSuccess: () => {
          void navigate(safeNext(params.get("next")), { replace: true });
        },
      },
    );
  };

  return (
    <div className="login">
      <form onSubmit={submit} aria-label="Sign in to Fathom">
        <h1>Fathom</h1>
        <label>
          Username
          <input
            name="username"
            autoComplete="username"
            value={username}
            required
            onChange={(event) => {
              setUsername(event.target.value);
            }}
          />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            autoComplete="current-password"
            value={password}
            required
            onChange={(event) => {
              setPassword(event.target.value);
            }}
          />
        </label>
        {login.isError && (
          <p className="error" role="alert">
            {login.error.message}
          </p>
        )}
        <button type="submit" disabled={login.isPending}>
          {login.isPending ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </div>
  );
}
