"""Regression detectors: throughput drops, throughput steps, RTT shifts, loss steps, route changes.

Pure functions over plain values (the methods and parameters of shared reference
probes-and-detection.md section 4), no database. Every detector walks a whole time-ordered
series and returns the episodes it finds in it, so recomputing over the same data gives the
same answer: the caller stores each episode as a finding keyed by path, metric and
`started_at`, idempotently, and a later recomputation over a longer series finds the same
episodes again (with `cleared_at` filled in once the path has recovered).

- `episodes`: the Episode every rule returns, and what the rules share;
- `throughput` (with the statistics in `edivisive`): the fast and the slow rule;
- `windows`, `rtt`, `loss`: aligned probe windows, the RTT CUSUM and the loss rule;
- `routes`: route changes from trace fingerprints;
- `ecmp`: ECMP members moving, appearing, vanishing, and their weights shifting;
- `matching`: episodes of several rules merged into incidents and matched to stored findings.

Inputs are sorted by time here (a stable sort, so equal times keep their order); values that
are not finite are skipped. Flood control that belongs to one detector lives with it
(hysteresis, confirmation by N points, minimum effect, one open episode per metric and rule);
grouping of episodes across paths is the caller's.
"""
