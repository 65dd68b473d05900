"""trapline: an emulator-hosted instrumentation sandbox for x86 and x86-64 Linux binaries."""
from .sandbox import RunResult, Sandbox

__all__ = ["Sandbox", "RunResult"]
