"""Run a committed sample with its own folder as the guest's /.

argv[0] becomes "/NAME" and the environment is cleared, so the guest's start-up (musl walks its
argv and environment) runs the same instructions wherever the checkout is. Tests whose result
depends on where the virtual timer lands (hot spots, walk-up chains) need that: a longer path
shifts every sample, and CI runs the suite in another folder.
"""
from pathlib import Path

from trapline.sandbox import Sandbox


def rooted(argv) -> tuple[Sandbox, list[str]]:
    program = Path(argv[0])
    return Sandbox(rootfs=str(program.parent), clear_env=True), [f"/{program.name}", *map(str, argv[1:])]
