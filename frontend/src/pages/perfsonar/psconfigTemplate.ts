// A pSConfig template as the import form reads it from a file in the browser: it must be one
// JSON object. Whether its addresses, groups, tests and tasks map is the server's to report.

export type TemplateRead = { ok: true; template: Record<string, unknown> } | { ok: false; error: string };

const MAX_MESSAGE = 120;

/** The parser's complaint on one short line: engines quote the text, which may be long. */
function parserMessage(error: unknown): string {
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s+/gu, " ").trim();
  return message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}…` : message;
}

/** The file's text as a template, or a sentence that says why it is not one. */
export function parseTemplate(text: string, fileName: string): TemplateRead {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text) as unknown;
  } catch (error) {
    return { ok: false, error: `${fileName} is not JSON (${parserMessage(error)}); a pSConfig template is a JSON file.` };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return {
      ok: false,
      error: `${fileName} is JSON but not a pSConfig template: a template is one JSON object with addresses, groups, tests and tasks.`,
    };
  }
  return { ok: true, template: parsed as Record<string, unknown> };
}

/** A chosen file's text, by FileReader (every browser has it; Blob.text() is newer). */
export function readFileText(file: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      resolve(typeof reader.result === "string" ? reader.result : "");
    };
    reader.onerror = () => {
      reject(reader.error ?? new Error("the file could not be read"));
    };
    reader.readAsText(file);
  });
}
