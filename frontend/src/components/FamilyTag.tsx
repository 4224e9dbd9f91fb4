import { familyLabel } from "../lib/family";

/** A path's address family beside its name: a dual-stack pair is two paths, IPv4 and IPv6. */
export function FamilyTag({ family }: { family: number }) {
  return (
    <span className={family === 6 ? "family-tag family-6" : "family-tag"} data-family={family}>
      {familyLabel(family)}
    </span>
  );
}
