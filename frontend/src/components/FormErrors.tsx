/**
 * A field's complaint, beside the field. It is announced when it appears (an answer to a
 * submit); `quiet` where it follows the typing, which would interrupt at every keystroke:
 * the input's description carries it, and such forms announce a summary on submit.
 */
export function FieldError({
  message,
  id,
  quiet = false,
}: {
  message: string | undefined;
  id?: string;
  quiet?: boolean | undefined;
}) {
  if (message === undefined || message === "") {
    return null;
  }
  return (
    <span className="field-error" id={id} {...(quiet ? {} : { role: "alert" })}>
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
