"""The consumer side (US 7,350,196): the session, probe specs, records, actions' context, return probes."""
