// Number and time formatting shared by every page, so units read the same everywhere.

const NO_VALUE = "–";

/** Milliseconds with precision that suits the magnitude: 0.042 ms, 7.81 ms, 312 ms. */
export function formatMs(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) {
    return NO_VALUE;
  }
  const abs = Math.abs(value);
  if (abs < 1) {
    return `${value.toFixed(3)} ms`;
  }
  if (abs < 100) {
    return `${value.toFixed(2)} ms`;
  }
  return `${value.toFixed(0)} ms`;
}

/** A fraction 0..1 as a percentage; small non-zero loss stays visible (0.01 %, not 0 %). */
export function formatPercent(fraction: number | null | undefined): string {
  if (fraction === null || fraction === undefined || !Number.isFinite(fraction)) {
    return NO_VALUE;
  }
  const percent = fraction * 100;
  if (percent === 0) {
    return "0 %";
  }
  if (percent < 0.1) {
    return `${percent.toFixed(3)} %`;
  }
  if (percent < 10) {
    return `${percent.toFixed(2)} %`;
  }
  return `${percent.toFixed(1)} %`;
}

const BINARY_UNITS = ["B", "KiB", "MiB", "GiB", "TiB"] as const;

/** Buffer sizes as kernels configure them: binary units, 6291456 -> "6 MiB". */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) {
    return NO_VALUE;
  }
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < BINARY_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const digits = Number.isInteger(value) ? 0 : value < 10 ? 2 : 1;
  return `${value.toFixed(digits)} ${BINARY_UNITS[unit] ?? "B"}`;
}

const RATE_UNITS = [
  [1e12, "Tbit/s"],
  [1e9, "Gbit/s"],
  [1e6, "Mbit/s"],
  [1e3, "kbit/s"],
] as const;

/**
 * A bit rate in decimal units, as iperf3 and link speeds are quoted: 3.19e9 -> "3.2 Gbit/s",
 * 940e6 -> "940 Mbit/s", 1e10 -> "10 Gbit/s". Below 100 of a unit it keeps up to `decimals`
 * places, from 100 on whole units: a measured rate is not known better than that. A rate
 * someone configured passes 2, so 1.25 Gbit/s reads as it was written.
 */
export function formatRate(bps: number | null | undefined, decimals = 1): string {
  if (bps === null || bps === undefined || !Number.isFinite(bps) || bps < 0) {
    return NO_VALUE;
  }
  for (const [scale, unit] of RATE_UNITS) {
    if (bps >= scale) {
      const value = bps / scale;
      // Number() drops the trailing zeros toFixed leaves: "10", not "10.0".
      return `${Number(value.toFixed(value >= 100 ? 0 : decimals))} ${unit}`;
    }
  }
  return `${Math.round(bps)} bit/s`;
}

/** Link speed from Mbit/s, as host facts report it: 1000 -> "1 Gbit/s", 100 -> "100 Mbit/s". */
export function formatLinkSpeed(mbps: number | null | undefined): string {
  if (mbps === null || mbps === undefined || mbps <= 0) {
    return NO_VALUE;
  }
  return formatRate(mbps * 1e6);
}

/** How long ago, coarse enough to read at a glance: "12 s ago", "5 min ago", "3 h ago". */
export function formatAgo(iso: string | null | undefined, now: Date = new Date()): string {
  if (iso === null || iso === undefined || iso === "") {
    return "never";
  }
  const then = new Date(iso);
  const seconds = Math.round((now.getTime() - then.getTime()) / 1000);
  if (Number.isNaN(seconds)) {
    return NO_VALUE;
  }
  if (seconds < 0) {
    return "in the future";
  }
  if (seconds < 90) {
    return `${seconds} s ago`;
  }
  const minutes = Math.round(seconds / 60);
  if (minutes < 90) {
    return `${minutes} min ago`;
  }
  const hours = Math.round(minutes / 60);
  if (hours < 48) {
    return `${hours} h ago`;
  }
  return `${Math.round(hours / 24)} d ago`;
}

/** An absolute UTC timestamp for tooltips: NOCs compare logs across time zones. */
export function formatUtc(iso: string | null | undefined): string {
  if (iso === null || iso === undefined || iso === "") {
    return NO_VALUE;
  }
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) {
    return NO_VALUE;
  }
  return `${date.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** A bucket width: 60 -> "1 min", 3600 -> "1 h", 45 -> "45 s". */
export function formatDuration(seconds: number): string {
  if (seconds % 86_400 === 0) {
    return `${seconds / 86_400} d`;
  }
  if (seconds % 3600 === 0) {
    return `${seconds / 3600} h`;
  }
  if (seconds % 60 === 0) {
    return `${seconds / 60} min`;
  }
  return `${seconds} s`;
}
