"""The probes' vocabulary, shared by every part of the instrumenter: what a probe is
(definitions.py), what a Python action receives when it fires (context.py), and the records a
hit produces with the buffers they go to (records.py). It imports nothing else of the
instrumenter, so strategies, the profiler and the tracing session can all build on it.
"""
