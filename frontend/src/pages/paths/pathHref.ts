/** The path page of source -> destination (PathsPage.tsx re-exports it for other modules). */
export function pathHref(sourceId: string, destinationId: string): string {
  return `/paths/${sourceId}/${destinationId}`;
}
