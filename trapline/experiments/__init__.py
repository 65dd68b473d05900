"""Reproducible instrumentation experiments (issue 28): a spec (spec.py) expands into sweep
points (sweep.py, plan.py) that run in worker processes or on a Dask cluster (execute.py,
point.py) into a results folder with a manifest (runner.py, manifest.py, results.py, plots.py),
which `verify` re-runs and compares bit for bit (verify.py). The command is cli.py."""
