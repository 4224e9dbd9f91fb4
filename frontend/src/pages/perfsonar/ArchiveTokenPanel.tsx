import { useRef } from "react";

import type { ArchiveToken } from "../../api/perfsonar";
import { useArchiveToken, useRotateArchiveToken } from "../../api/perfsonarQueries";
import { ConfirmButton } from "../../components/ConfirmButton";
import { CopyButton } from "../../components/CopyButton";
import { FormError } from "../../components/FormErrors";
import { LoadError, Loading } from "../../components/QueryState";
import { splitErrors } from "../../lib/formErrors";

/** An http archive spec that pushes to Fathom: for archives set up on the node by hand. */
export function archiveSpec(token: ArchiveToken): string {
  const spec = {
    archiver: "http",
    data: { schema: 2, _url: token.archive_url, op: "put", _headers: { Authorization: token.authorization } },
  };
  return JSON.stringify(spec, null, 2);
}

function SecretLine({ label, text, pre = false }: { label: string; text: string; pre?: boolean }) {
  const ref = useRef<HTMLElement>(null);
  const preRef = useRef<HTMLPreElement>(null);
  return (
    <>
      <p className="secret-label">{label}</p>
      <div className="secret-line">
        {pre ? <pre ref={preRef}>{text}</pre> : <code ref={ref}>{text}</code>}{" "}
        <CopyButton text={text} target={pre ? preRef : ref} label={`Copy ${label.toLowerCase()}`} />
      </div>
    </>
  );
}

/**
 * The token a node's http archiver sends with each run it pushes (operators). Fathom derives
 * it, so it can be shown again; rotating it refuses the old one.
 */
export function ArchiveTokenPanel({ name, onClose }: { name: string; onClose: () => void }) {
  const token = useArchiveToken(name);
  const rotate = useRotateArchiveToken(name);
  const rotateError = splitErrors(rotate.error, []).general;
  let body;
  if (token.isPending) {
    body = <Loading what="the archive token" />;
  } else if (token.isError) {
    body = <LoadError what="the archive token" error={token.error} />;
  } else {
    body = (
      <>
        <SecretLine label="Token" text={token.data.token} />
        <SecretLine label="Authorization header" text={token.data.authorization} />
        <SecretLine label="Archive URL" text={token.data.archive_url} />
        <SecretLine label="Archive spec" text={archiveSpec(token.data)} pre />
      </>
    );
  }
  return (
    <section className="once-secret" aria-label={`Archive token of ${name}`}>
      <h3>Archive token of {name}</h3>
      <p className="muted">
        The node&apos;s http archiver posts each run&apos;s result to Fathom with this token; the tasks Fathom creates
        carry it. Use it for archives you set up on the node yourself (a default archive in
        /etc/pscheduler/default-archives/ or a pSConfig template).
      </p>
      {body}
      <FormError message={rotateError} />
      <div className="row-actions">
        <ConfirmButton
          label="Rotate"
          question={`Rotate the archive token of ${name}? Pushes with the old token are refused from now on.`}
          confirmLabel="Rotate token"
          busyLabel="Rotating…"
          disabled={token.isPending}
          onConfirm={() => rotate.mutateAsync()}
        />
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
    </section>
  );
}
