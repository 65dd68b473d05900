"""The consumer side (US 7,350,196): the session that places probes and drains their records,
dynamic enabling, detach, return probes. The probes' vocabulary (probe specs, records, actions'
context) is instrumenter/probes/."""
