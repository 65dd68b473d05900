"""The consumer side (seed 001): the session, probe specs, records, actions' context, return probes."""
