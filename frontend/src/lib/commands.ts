// Command lines the UI hands to a person to paste: enrolling an agent, calling the API.

const SHELL_SAFE = /^[A-Za-z0-9@%+=:,./_-]+$/;

/** A word the shell reads back unchanged: bare when safe, else single-quoted. */
export function shellQuote(word: string): string {
  if (SHELL_SAFE.test(word)) {
    return word;
  }
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** A value the person still has to fill in stays a visible <placeholder>, unquoted. */
function argument(value: string, placeholder: string): string {
  const trimmed = value.trim();
  return trimmed === "" ? `<${placeholder}>` : shellQuote(trimmed);
}

export interface EnrollCommand {
  /** The Fathom server as agents reach it, e.g. https://fathom.example.org */
  server: string;
  token: string;
  /** Blank when the token enrols any new name: the command keeps a <name> placeholder. */
  name: string;
  /** The addresses peers probe, one per family (space- or comma-separated, the primary
   * first: a dual-stack host's IPv4 and IPv6); blank leaves an <address> placeholder. */
  address: string;
  /** A re-key replaces the credential the agent already holds. */
  rekey?: boolean;
}

/** The `fathom-agent enroll` line to run on the endpoint. */
export function enrollCommand({ server, token, name, address, rekey = false }: EnrollCommand): string {
  const words = [
    "fathom-agent enroll",
    `--server ${shellQuote(server)}`,
    `--token ${shellQuote(token)}`,
    `--name ${argument(name, "name")}`,
  ];
  const addresses = address.split(/[\s,]+/).filter((word) => word !== "");
  for (const each of addresses.length > 0 ? addresses : [""]) {
    words.push(`--address ${argument(each, "address")}`);
  }
  if (rekey) {
    words.push("--force");
  }
  return words.join(" ");
}

/** A first API call with a personal token: the list of paths. */
export function curlExample(server: string, token: string): string {
  return `curl -H "Authorization: Bearer ${token}" ${shellQuote(`${server.replace(/\/+$/, "")}/api/v1/paths/`)}`;
}
