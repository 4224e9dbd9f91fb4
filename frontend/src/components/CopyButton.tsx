import { useState, type RefObject } from "react";

/** Selects the element's text so the person can copy it by hand (no clipboard API: http, old browsers). */
function selectContents(element: HTMLElement): void {
  const selection = window.getSelection();
  if (selection === null) {
    return;
  }
  const range = document.createRange();
  range.selectNodeContents(element);
  selection.removeAllRanges();
  selection.addRange(range);
}

/**
 * Copies `text` with the clipboard API; where that is missing or refused (a plain-http
 * origin), it selects `target`'s text instead and says to press Ctrl+C.
 */
export function CopyButton({
  text,
  target,
  label = "Copy",
}: {
  text: string;
  target: RefObject<HTMLElement | null>;
  label?: string;
}) {
  const [outcome, setOutcome] = useState<"copied" | "selected" | null>(null);
  const copy = async () => {
    try {
      // The clipboard API is absent on insecure origins, despite what the DOM types say.
      const clipboard = navigator.clipboard as Clipboard | undefined;
      if (clipboard === undefined) {
        throw new Error("no clipboard");
      }
      await clipboard.writeText(text);
      setOutcome("copied");
    } catch {
      if (target.current !== null) {
        selectContents(target.current);
      }
      setOutcome("selected");
    }
  };
  return (
    <>
      <button
        type="button"
        onClick={() => {
          void copy();
        }}
      >
        {label}
      </button>
      {outcome !== null && (
        <span className="muted" role="status">
          {outcome === "copied" ? "Copied." : "Selected: press Ctrl+C (⌘C) to copy."}
        </span>
      )}
    </>
  );
}
