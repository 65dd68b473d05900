"""Scripts for samples/forkscript and what their output says about each process (the process-tree
property, trees.py, and the project's own children properties draw them from here).

A script is a list of steps: ("call", fn, n) with fn in "abc", ("k",), ("v", steps),
("f", steps), ("e", steps) — exec with the steps that follow as the new image's script —
and ("x",). `argv` serializes it in forkscript's grammar (samples/README.md) and puts a `p`
(print pid) first in every image, so the output maps every label to its pid.
"""
from __future__ import annotations

import re
from collections import Counter

from hypothesis import strategies as st

FUNCTIONS = {"a": "probed_a", "b": "probed_b", "c": "probed_c"}
LINE = re.compile(r"^(P[vfe0-9]*): (.*)$")


def argv(steps) -> list[str]:
    return ["p", *_tokens(steps)]


def _tokens(steps) -> list[str]:
    out = []
    for step in steps:
        kind = step[0]
        if kind == "call":
            out.append(f"{step[1]}{step[2]}")
        elif kind in ("v", "f"):
            out += [kind, "p", *_tokens(step[1]), "."]
        elif kind == "e":
            out += ["e", "p", *_tokens(step[1])]
        else:
            out.append(kind)
    return out


def scripts(max_depth: int, vfork_children_flat: bool):
    """Hypothesis strategy for scripts. With vfork_children_flat, a vfork child's steps have
    no children of their own (the patent's vfork child only calls, hashes, execs or exits)."""
    calls = st.tuples(st.just("call"), st.sampled_from("abc"), st.integers(0, 3))
    leaf_steps = st.one_of(calls, st.just(("k",)))

    def group(depth, in_vfork):
        options = [leaf_steps]
        if depth < max_depth and not (in_vfork and vfork_children_flat):
            options.append(st.tuples(st.just("v"), st.deferred(lambda: group(depth + 1, True))))
            options.append(st.tuples(st.just("f"), st.deferred(lambda: group(depth + 1, False))))
        body = st.lists(st.one_of(*options), max_size=5)
        ending = st.sampled_from(["end", "x", "exec"])
        # An exec'd image runs a few calls and hashes (no children: it keeps trees small).
        return st.builds(_close_group, body, ending, st.lists(leaf_steps, max_size=3))

    return group(0, False)


def _close_group(body, ending, rest):
    if ending == "exec":
        return [*body, ("e", rest)]
    return [*body, ("x",)] if ending == "x" else body


def images(steps, label="P", origins=("top",)):
    """Every process image the script runs: (label, origins, its own steps), where origins
    is the chain of how it came to be from the first image ("top", then "v", "f" or "e")."""
    found = [(label, origins, [s for s in steps if s[0] not in ("v", "f", "e")])]
    children = 0
    for step in steps:
        if step[0] in ("v", "f"):
            children += 1
            found += images(step[1], f"{label}{step[0]}{children}", origins + (step[0],))
        elif step[0] == "e":
            found += images(step[1], f"{label}e", origins + ("e",))
            break
        elif step[0] == "x":
            break
    return found


class Output:
    """forkscript's output, by label: pid, calls per function, code hashes in order."""

    def __init__(self, stdout: bytes):
        self.pid: dict[str, int] = {}
        self.calls: dict[str, Counter] = {}
        self.hashes: dict[str, list[int]] = {}
        for line in stdout.decode().splitlines():
            match = LINE.match(line)
            assert match, f"unexpected line {line!r}"
            label, rest = match.groups()
            if rest.startswith("pid="):
                self.pid[label] = int(rest[4:])
            elif rest.startswith("code="):
                self.hashes.setdefault(label, []).append(int(rest[5:], 16))
            elif rest.startswith("a="):
                self.calls[label] = Counter(
                    {FUNCTIONS[k]: int(v) for k, v in re.findall(r"([abc])=(\d+)", rest)})

    def calls_per_pid(self) -> dict[int, Counter]:
        per_pid: dict[int, Counter] = {}
        for label, calls in self.calls.items():
            per_pid.setdefault(self.pid[label], Counter()).update(calls)
        return per_pid


def hit_before_each_hash(steps, probed_functions: set[str]) -> list[bool]:
    """For the image running `steps` (no children), whether a probe was hit before each `k`:
    probed functions are straight-line, so any call of one that carries a probe hits it;
    probed_b calls probed_c."""
    reached = {"a": {"probed_a"}, "b": {"probed_b", "probed_c"}, "c": {"probed_c"}}
    hit, answers = False, []
    for step in steps:
        if step[0] == "call" and step[2] > 0 and reached[step[1]] & probed_functions:
            hit = True
        elif step[0] == "k":
            answers.append(hit)
    return answers
