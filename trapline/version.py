"""trapline's version: the one place it is written (setup.cfg reads it: `attr:`)."""
__version__ = "0.1.0"
