"""`trapline profile -o DIR`: the files of one profile, and the SVG flame graph drawn by a
flame-graph tool (never by hand): Brendan Gregg's `flamegraph.pl`, reading the folded stacks.
The tool is the one TRAPLINE_FLAMEGRAPH names, else `flamegraph.pl` or its Rust port
`inferno-flamegraph` on PATH, else the copy Debian installs with Devel::NYTProf
(`apt-get install libdevel-nytprof-perl`: /usr/share/perl5/Devel/NYTProf/flamegraph.pl).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import UsageError
from .exporters import chrome_trace, dump_json, folded_text, speedscope
from .model import Profile

FOLDED, SPEEDSCOPE, CHROME, SVG = "profile.folded", "profile.speedscope.json", "profile.trace.json", "flamegraph.svg"
WALKUP = "walkup.json"
FLAMEGRAPH_TOOLS = ("flamegraph.pl", "inferno-flamegraph")
DEBIAN_FLAMEGRAPH = "/usr/share/perl5/Devel/NYTProf/flamegraph.pl"


def flamegraph_tool() -> str | None:
    named = os.environ.get("TRAPLINE_FLAMEGRAPH")
    if named:
        return named
    found = next((found for found in map(shutil.which, FLAMEGRAPH_TOOLS) if found), None)
    if found is None and os.access(DEBIAN_FLAMEGRAPH, os.X_OK):
        found = DEBIAN_FLAMEGRAPH
    return found


def prepare_output_dir(directory: str) -> None:
    """Make `directory` and prove it takes files before a run whose outputs go there, so a
    folder that cannot be written fails at once, not after the whole run (issue 26)."""
    try:
        Path(directory).mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".trapline-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise UsageError(f"-o {directory}: {exc.strerror or exc}") from None


def write_outputs(profile: Profile, directory: str, name: str, walkup: dict | None = None) -> list[str]:
    """Write the profile's files into `directory` (made if missing); returns the notes to show
    (what was written, and why the SVG was not when no tool draws it). With `walkup`, a walk-up's
    report (walkup_report.walkup_json: the live run's, or the one its recorded trace ends with,
    for `trapline report -o`): walkup.json, and the walk-up's hooks and steps in the Chrome trace."""
    folder = Path(directory)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"-o {directory}: {exc.strerror or exc}") from None
    folded = folded_text(profile)
    (folder / FOLDED).write_text(folded)
    (folder / SPEEDSCOPE).write_text(dump_json(speedscope(profile, name)))
    extra_events = None
    written = [folder / FOLDED, folder / SPEEDSCOPE, folder / CHROME]
    if walkup is not None:
        from .walkup_report import chrome_events
        extra_events = chrome_events(walkup, profile)
        (folder / WALKUP).write_text(json.dumps(walkup, indent=1) + "\n")
        written.append(folder / WALKUP)
    (folder / CHROME).write_text(dump_json(chrome_trace(profile, extra_events)))
    notes = [f"wrote {', '.join(map(str, written))}"]
    notes.append(_flamegraph(folded, folder / SVG, name))
    return notes


def _flamegraph(folded: str, svg: Path, title: str) -> str:
    if not folded.strip():
        return "no flame graph: no samples to draw"
    tool = flamegraph_tool()
    if tool is None:
        return (f"no flame graph: neither {' nor '.join(FLAMEGRAPH_TOOLS)} is on PATH "
                "(apt-get install libdevel-nytprof-perl, or set TRAPLINE_FLAMEGRAPH); "
                "the folded stacks are what it reads")
    # --hash colours each function by its name, and a fixed Perl hash seed keeps flamegraph.pl's
    # element order: the same profile draws the same bytes (docs/ARCHITECTURE.md's determinism contract)
    env = {**os.environ, "PERL_HASH_SEED": "0", "PERL_PERTURB_KEYS": "0"}
    try:
        done = subprocess.run([tool, "--title", title, "--countname", "samples", "--hash"],
                              input=folded, capture_output=True, text=True, check=False, env=env)
    except OSError as exc:
        return f"no flame graph: cannot run {tool}: {exc.strerror or exc}"
    if done.returncode != 0 or not done.stdout.lstrip().startswith("<?xml"):
        detail = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[0]
        return f"no flame graph: {tool} failed: {detail}"
    svg.write_text(done.stdout)
    return f"wrote {svg} ({Path(tool).name})"
