// The perfSONAR API's shapes (nodes, archive tokens, pScheduler tasks, pSConfig import) and
// the runs of a path, named for the UI: each is the OpenAPI schema's own type (schema.d.ts).
import type { Schemas } from "./client";

/** What measures at an endpoint (inventory.choices.AgentKind). */
export type AgentKind = Schemas["AgentKindEnum"];

/** How Fathom checks a node's HTTPS certificate (perfsonar.choices.TlsMode). */
export type TlsMode = Schemas["TlsModeEnum"];

/** GET /perfsonar/nodes/: one node, how to reach it, and what its last check found. */
export type PerfsonarNode = Schemas["Node"];

/** POST /perfsonar/nodes/. */
export type PerfsonarNodeRequest = Schemas["NodeCreateRequest"];

/** GET (and POST to rotate) /perfsonar/nodes/{name}/archive-token/. */
export type ArchiveToken = Schemas["ArchiveToken"];

/** GET /perfsonar/nodes/{name}/tasks/: one pScheduler task Fathom keeps on the node. */
export type PerfsonarTask = Schemas["NodeTask"];

/** POST /perfsonar/psconfig/import/: a template (parsed JSON) or a URL to fetch it from. */
export type PsconfigImportRequest = Schemas["PsconfigImportRequest"];

export type PsconfigImportReport = Schemas["PsconfigReport"];
export type ImportedMesh = Schemas["ImportedMesh"];
export type ImportedNode = Schemas["ImportedNode"];

/** GET /paths/runs/: one run of a path, with why it did not measure when it did not. */
export type PathRun = Schemas["RunRow"];
