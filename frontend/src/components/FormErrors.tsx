/** A field's complaint from the server, beside the field. */
export function FieldError({ message, id }: { message: string | undefined; id?: string }) {
  if (message === undefined || message === "") {
    return null;
  }
  return (
    <span className="field-error" role="alert" id={id}>
      {message}
    </span>
  );
}

/** A form's complaint that belongs to no one field. */
export function FormError({ message }: { message: string | null }) {
  if (message === null) {
    return null;
  }
  return (
    <p className="error" role="alert">
      {message}
    </p>
  );
}
