"""The analysis against the database: reads runs, samples and host-facts history, calls the
pure modules (runs, diagnosis, modes, changes) and stores what they found.

- `inputs`: what one run's ceilings rest on, as of a moment (host facts, loss, modes, TCP_INFO);
- `run_analyses`: runs analysed and stored, the incremental task, retention;
- `sweep_modes`: each flow sweep's modes, and the modes a path has now;
- `findings`: the regression rules over a path's history, reconciled with its findings;
- `paths`, `grid`: the reads behind the path page and the mesh grid.
"""
