// Sparkline geometry: series of numbers (null for a gap) as SVG path data in a small box.
// Plain strings, no Plotly: the Paths page draws two of these on each of 100 rows.

export interface SparkSeries {
  values: readonly (number | null)[];
  /** The CSS class its path gets (stroke colour, dashes). */
  className: string;
}

export interface SparkBox {
  width: number;
  height: number;
  /** Whether the y axis starts at 0 (rates against a ceiling) or at the smallest value (RTT). */
  zeroBased: boolean;
}

export interface SparkPath {
  d: string;
  className: string;
}

/** Room kept round the line so its stroke and end caps are not clipped. */
const PAD = 1.5;

function finite(value: number | null): value is number {
  return value !== null && Number.isFinite(value);
}

/** The [low, high] the series share; null when none has a value. */
export function sparkDomain(series: readonly SparkSeries[], zeroBased: boolean): [number, number] | null {
  let low = Infinity;
  let high = -Infinity;
  for (const item of series) {
    for (const value of item.values) {
      if (finite(value)) {
        low = Math.min(low, value);
        high = Math.max(high, value);
      }
    }
  }
  if (high === -Infinity) {
    return null;
  }
  return [zeroBased ? Math.min(0, low) : low, high];
}

function round(value: number): string {
  return String(Math.round(value * 10) / 10);
}

/**
 * One path per series on a shared scale: x by position (the points are evenly spaced hours
 * or consecutive runs), y from the shared domain; a gap breaks the line, and a point alone
 * between gaps is a dot (a zero-length segment that round caps draw). Empty when no series
 * has a value.
 */
export function sparkPaths(series: readonly SparkSeries[], box: SparkBox): SparkPath[] {
  const domain = sparkDomain(series, box.zeroBased);
  if (domain === null) {
    return [];
  }
  const [low, high] = domain;
  const count = Math.max(...series.map((item) => item.values.length));
  const innerWidth = box.width - 2 * PAD;
  const innerHeight = box.height - 2 * PAD;
  const x = (index: number) => PAD + (count <= 1 ? innerWidth / 2 : (index * innerWidth) / (count - 1));
  // A flat series sits mid-height rather than on the floor, where it would read as zero.
  const y = (value: number) =>
    high === low ? PAD + innerHeight / 2 : PAD + innerHeight - ((value - low) * innerHeight) / (high - low);
  return series.map((item) => {
    const parts: string[] = [];
    let run = 0;
    item.values.forEach((value, index) => {
      if (!finite(value)) {
        if (run === 1) {
          parts.push("h0");
        }
        run = 0;
        return;
      }
      parts.push(`${run === 0 ? "M" : "L"}${round(x(index))} ${round(y(value))}`);
      run += 1;
    });
    if (run === 1) {
      parts.push("h0");
    }
    return { d: parts.join(" "), className: item.className };
  });
}
