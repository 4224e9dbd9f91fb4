"""Meshes turned into work.

A mesh yields directed paths (source agent -> destination agent, or -> an external target for
list meshes). Background tests (ping, flow sweep, trace) go to the source agent as periodic
tests it schedules itself. Exclusive tests (throughput) are planned centrally, ahead of time,
in slots that never overlap for any agent as sender or receiver across all meshes; each
agent's plan lists its slots.

- `paths`: the directed paths of the meshes' tests;
- `plans`: each agent's plan and its version;
- `slot_planning`: exclusive slots planned to the horizon, and again when a mesh changes;
- `outcomes`: slots settled by their results, or missed;
- `issued_plans`, `refusals`: the plans each agent was served, and results no plan vouches for;
- `housekeeping`: old issued plans and past slots forgotten;
- `utilization`: each agent's exclusive time against the meshes' demand;
- `defaults`: the default mesh;
- `writes`: a mesh saved, deleted or reverted: checked against the plan, re-planned, audited.
"""
