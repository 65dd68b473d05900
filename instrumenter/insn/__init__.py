"""The instruction core: decode once, classify by policy tables, relocate, emit glue."""
