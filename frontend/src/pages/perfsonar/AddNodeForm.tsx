import { useState } from "react";

import type { PerfsonarNode, PerfsonarNodeRequest, TlsMode } from "../../api/perfsonar";
import { useAddPerfsonarNode } from "../../api/perfsonarQueries";
import { Field, TextField } from "../../components/Field";
import { FormError } from "../../components/FormErrors";
import { splitErrors } from "../../lib/formErrors";
import { TLS_MODES } from "./nodes";
import "./perfsonar.css";

const NODE_FIELDS = ["name", "api_url", "address", "tls_mode", "ca_bundle", "pinned_sha256"] as const;

export interface NodeDraft {
  name: string;
  apiUrl: string;
  address: string;
  tlsMode: TlsMode;
  caBundle: string;
  pinnedSha256: string;
}

/**
 * The request for a draft: the CA bundle or fingerprint only for the TLS mode that uses it,
 * blank otherwise (a blank address: the API host's).
 */
export function nodeRequest(draft: NodeDraft): PerfsonarNodeRequest {
  return {
    name: draft.name.trim(),
    api_url: draft.apiUrl.trim(),
    address: draft.address.trim(),
    tls_mode: draft.tlsMode,
    ca_bundle: draft.tlsMode === "ca_bundle" ? draft.caBundle.trim() : "",
    pinned_sha256: draft.tlsMode === "pinned" ? draft.pinnedSha256.trim() : "",
  };
}

const EMPTY: NodeDraft = { name: "", apiUrl: "", address: "", tlsMode: "system", caBundle: "", pinnedSha256: "" };

/** Registers a perfSONAR node by its pScheduler API; the server checks it at once. */
export function AddNodeForm({ onAdded, onClose }: { onAdded: (node: PerfsonarNode) => void; onClose: () => void }) {
  const [draft, setDraft] = useState<NodeDraft>(EMPTY);
  const add = useAddPerfsonarNode();
  const errors = splitErrors(add.error, NODE_FIELDS);
  const update = (patch: Partial<NodeDraft>) => {
    setDraft((current) => ({ ...current, ...patch }));
  };
  const tlsHint = TLS_MODES.find((mode) => mode.value === draft.tlsMode)?.hint;
  return (
    <form
      className="stacked-form"
      aria-label="Add perfSONAR node"
      onSubmit={(event) => {
        event.preventDefault();
        add.mutate(nodeRequest(draft), { onSuccess: onAdded });
      }}
    >
      <TextField
        label="Name"
        error={errors.fields.name}
        hint="how meshes, paths and results name it"
        value={draft.name}
        placeholder="ps-london"
        required
        onChange={(name) => {
          update({ name });
        }}
      />
      <TextField
        label="pScheduler API URL"
        error={errors.fields.api_url}
        type="url"
        value={draft.apiUrl}
        placeholder="https://ps.example.net/pscheduler"
        required
        onChange={(apiUrl) => {
          update({ apiUrl });
        }}
      />
      <TextField
        label="Measurement address"
        error={errors.fields.address}
        hint="Optional: the address tests run to, if not the API URL's host."
        value={draft.address}
        placeholder="198.18.7.7"
        onChange={(address) => {
          update({ address });
        }}
      />
      <Field label="TLS verification" error={errors.fields.tls_mode} hint={tlsHint}>
        {(props) => (
          <select
            {...props}
            value={draft.tlsMode}
            onChange={(event) => {
              update({ tlsMode: event.target.value as TlsMode });
            }}
          >
            {TLS_MODES.map((mode) => (
              <option key={mode.value} value={mode.value}>
                {mode.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      {draft.tlsMode === "ca_bundle" && (
        <Field label="CA bundle" error={errors.fields.ca_bundle} hint="PEM: one or more -----BEGIN CERTIFICATE----- blocks">
          {(props) => (
            <textarea
              {...props}
              rows={6}
              spellCheck={false}
              value={draft.caBundle}
              onChange={(event) => {
                update({ caBundle: event.target.value });
              }}
            />
          )}
        </Field>
      )}
      {draft.tlsMode === "pinned" && (
        <TextField
          label="SHA-256 fingerprint"
          error={errors.fields.pinned_sha256}
          hint={
            <>
              of the node&apos;s certificate, hex:{" "}
              <code>openssl s_client -connect HOST:443 &lt;/dev/null | openssl x509 -noout -fingerprint -sha256</code>
            </>
          }
          value={draft.pinnedSha256}
          spellCheck={false}
          onChange={(pinnedSha256) => {
            update({ pinnedSha256 });
          }}
        />
      )}
      <FormError message={errors.general} />
      <div className="buttons">
        <button type="submit" className="primary" disabled={add.isPending}>
          {add.isPending ? "Adding and checking…" : "Add node"}
        </button>
        <button type="button" onClick={onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** What the first check of a node just added found. */
export function NodeAddedNotice({ node, onDone }: { node: PerfsonarNode; onDone: () => void }) {
  const ok = node.reachable === true && node.problems.length === 0;
  return (
    <div className={ok ? "ok-notice" : "warning"} role="status">
      {ok ? (
        <>
          Added perfSONAR node <strong>{node.name}</strong>: reachable
          {(node.api_level ?? null) === null ? "" : `, API level ${String(node.api_level)}`}. Add it to a mesh to measure with it.
        </>
      ) : (
        <>
          Added perfSONAR node <strong>{node.name}</strong>, but its first check found problems:
          <ul>
            {(node.problems.length > 0 ? node.problems : [node.last_error || "it could not be reached"]).map(
              (problem) => (
                <li key={problem}>{problem}</li>
              ),
            )}
          </ul>
          Fix them on the node (or its TLS settings here), then “Check now”.
        </>
      )}{" "}
      <button type="button" onClick={onDone}>
        Dismiss
      </button>
    </div>
  );
}
