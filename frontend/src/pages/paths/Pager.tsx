import { pageRange, type PathPage } from "../../lib/pathList";

/** "1–100 of 9,900" with the buttons that move a page at a time. */
export function Pager({
  page,
  onPage,
  filtered,
}: {
  page: PathPage<unknown>;
  onPage: (page: number) => void;
  /** Whether the total counts only the paths the filters let through. */
  filtered: boolean;
}) {
  return (
    <nav className="pager" aria-label="Pages of paths">
      <span className="pager-range" data-testid="path-range">
        {pageRange(page)}
        {filtered ? " matching" : ""}
      </span>
      {page.pageCount > 1 && (
        <>
          <button
            type="button"
            disabled={page.page <= 1}
            onClick={() => {
              onPage(page.page - 1);
            }}
          >
            ← Previous
          </button>
          <span className="muted">
            page {page.page} of {page.pageCount}
          </span>
          <button
            type="button"
            disabled={page.page >= page.pageCount}
            onClick={() => {
              onPage(page.page + 1);
            }}
          >
            Next →
          </button>
        </>
      )}
    </nav>
  );
}
