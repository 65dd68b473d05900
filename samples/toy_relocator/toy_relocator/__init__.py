"""A toy probe strategy to break and fix with `trapline check` (issue 29's teaching package).

step1_copy   NaiveCopy: a relocator that copies the bytes (about fifty lines with its class)
step2_calls  CallsFixed: step 1's first bug fixed (a call pushes the original return address)

Each step is a whole strategy (trapline's trampoline strategy with this relocator), named by
`package.module:Class` or by the entry points pyproject.toml registers (toy-copy, toy-calls).
README.md walks through the steps; tests/e2e/check/test_teaching.py checks what it says.
"""
