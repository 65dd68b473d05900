"""trapline: an emulator-hosted instrumentation sandbox for x86 and x86-64 Linux binaries."""

__all__ = ["Sandbox", "RunResult"]


def __getattr__(name: str):
    # `from trapline import Sandbox` works as ever; `trapline --help` or `trapline explain`
    # (which import trapline.cli, hence this package) do not pay for importing the kernel.
    if name in __all__:
        from . import sandbox
        return getattr(sandbox, name)
    raise AttributeError(f"module 'trapline' has no attribute {name!r}")
