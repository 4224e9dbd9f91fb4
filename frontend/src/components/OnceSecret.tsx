import { useRef, type ReactNode } from "react";

import { CopyButton } from "./CopyButton";

/**
 * A new secret (token, credential) shown the one time the server sends it, with Copy
 * buttons and, where it helps, the command line that uses it. "Done" forgets it.
 */
export function OnceSecret({
  title,
  secret,
  command,
  commandLabel = "Command",
  children,
  onDone,
}: {
  title: string;
  secret: string;
  command?: string;
  commandLabel?: string;
  children?: ReactNode;
  onDone: () => void;
}) {
  const secretRef = useRef<HTMLElement>(null);
  const commandRef = useRef<HTMLPreElement>(null);
  return (
    <section className="once-secret" aria-label={title}>
      <h3>{title}</h3>
      <p className="warning">
        Shown once: copy it now. Fathom keeps only its hash and cannot show it again.
      </p>
      <div className="secret-line">
        <code ref={secretRef} data-testid="once-secret">
          {secret}
        </code>{" "}
        <CopyButton text={secret} target={secretRef} />
      </div>
      {command !== undefined && (
        <>
          <p className="secret-label">{commandLabel}</p>
          <div className="secret-line">
            <pre ref={commandRef}>{command}</pre> <CopyButton text={command} target={commandRef} label="Copy command" />
          </div>
        </>
      )}
      {children}
      <p>
        <button type="button" onClick={onDone}>
          Done
        </button>
      </p>
    </section>
  );
}
