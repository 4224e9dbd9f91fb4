package throughput

// How iperf3's numbers are read: damaged, implausible or missing values become nothing, never
// a measurement.

import "math"

// iperf3 3.12 prints some TCP_INFO values it never got as 2^32-1 or 2^64-1; no real
// window, RTT or counter comes near, so such values are missing, not measurements.
const implausible = float64(math.MaxUint32)

func counter(v *float64) *int64 {
	if v == nil || *v < 0 || *v >= implausible || math.IsNaN(*v) {
		return nil
	}
	n := int64(*v)
	return &n
}

// positive is counter for values where 0 means "not reported" (the remote side's TCP_INFO).
func positive(v *float64) *int64 {
	if n := counter(v); n != nil && *n > 0 {
		return n
	}
	return nil
}

// byteCount and rate keep the figures the contract requires non-negative: iperf3 never
// prints a negative amount, so one is damage, read as nothing.
func byteCount(v float64) int64 {
	if v < 0 || v >= math.MaxInt64 || math.IsNaN(v) {
		return 0
	}
	return int64(v)
}

func rate(v float64) float64 {
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

func finite(v *float64) *float64 {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) || *v >= implausible {
		return nil
	}
	return v
}

func minPtr(a, b *int64) *int64 {
	if a == nil || (b != nil && *b < *a) {
		return b
	}
	return a
}

func maxPtr(a, b *int64) *int64 {
	if a == nil || (b != nil && *b > *a) {
		return b
	}
	return a
}
