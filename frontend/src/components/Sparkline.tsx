import { sparkPaths, type SparkSeries } from "../lib/sparkline";

import "./sparkline.css";

/**
 * A word-sized chart of one or more series on a shared scale, labelled for screen readers
 * and hover; a dash when there is nothing to draw.
 */
export function Sparkline({
  series,
  label,
  width = 96,
  height = 22,
  zeroBased = false,
}: {
  series: readonly SparkSeries[];
  label: string;
  width?: number;
  height?: number;
  zeroBased?: boolean;
}) {
  const paths = sparkPaths(series, { width, height, zeroBased });
  if (paths.length === 0) {
    return (
      <span className="spark-empty muted" title={label}>
        –
      </span>
    );
  }
  return (
    <svg
      className="sparkline"
      role="img"
      aria-label={label}
      width={width}
      height={height}
      viewBox={`0 0 ${String(width)} ${String(height)}`}
    >
      <title>{label}</title>
      {paths.map((path, index) => (
        <path key={index} className={path.className} d={path.d} />
      ))}
    </svg>
  );
}
