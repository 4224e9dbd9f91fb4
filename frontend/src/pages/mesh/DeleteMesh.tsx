import { useState } from "react";

import { useDeleteMesh } from "../../api/meshQueries";
import { TextField } from "../../components/Field";

/** Deleting a mesh drops its tests and their planned slots; its results stay. The name typed confirms. */
export function DeleteMesh({ name, onDeleted }: { name: string; onDeleted: () => void }) {
  const remove = useDeleteMesh(name);
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState("");

  if (!open) {
    return (
      <button
        type="button"
        className="danger"
        onClick={() => {
          setOpen(true);
        }}
      >
        Delete this mesh…
      </button>
    );
  }
  return (
    <form
      className="mesh-form"
      aria-label="Delete the mesh"
      onSubmit={(event) => {
        event.preventDefault();
        if (typed === name) {
          remove.mutate(undefined, { onSuccess: onDeleted });
        }
      }}
    >
      <p>
        Its tests stop and their planned slots are dropped; results already measured stay. Type{" "}
        <code>{name}</code> to confirm.
      </p>
      <TextField
        label="Type the name of the mesh to confirm"
        type="text"
        autoComplete="off"
        value={typed}
        onChange={setTyped}
      />
      <div className="mesh-confirm">
        <button type="submit" className="danger" disabled={typed !== name || remove.isPending}>
          {remove.isPending ? "Deleting…" : "Delete mesh"}
        </button>
        <button
          type="button"
          onClick={() => {
            setOpen(false);
            setTyped("");
            remove.reset();
          }}
        >
          Cancel
        </button>
      </div>
      {remove.isError && (
        <p className="error" role="alert">
          The server refused to delete the mesh: {remove.error.message}
        </p>
      )}
    </form>
  );
}
