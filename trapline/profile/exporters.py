"""Files that other people's tools open (issue 18): folded stacks (Brendan Gregg's
stackcollapse format, read by flamegraph.pl and speedscope), speedscope's JSON file format and
Chrome's trace-event JSON (chrome://tracing, Perfetto).

Virtual time: the kernel's clock runs one nanosecond per guest instruction, so a sample taken
every N instructions stands for N ns; trace events give microseconds, as the format wants.
Every file is written in a fixed order (no dict or set order leaks), so a run writes the same
bytes every time.
"""
from __future__ import annotations

import json

from .model import Profile

SPEEDSCOPE_SCHEMA = "https://www.speedscope.app/file-format-schema.json"
EXPORTER = "trapline profile"


def folded_text(profile: Profile) -> str:
    """`comm;root;...;leaf count` lines, sorted (stackcollapse-perf.pl's output)."""
    lines = [";".join(_clean(name) for name in stack) + f" {count}"
             for stack, count in sorted(profile.folded().items())]
    return "".join(line + "\n" for line in lines)


def _clean(name: str) -> str:
    """A frame name as the folded format can hold it: no ';' (the separator), no newline."""
    return name.replace(";", ":").replace("\n", " ")


def speedscope(profile: Profile, name: str) -> dict:
    """speedscope's file format: shared frames, one `sampled` profile per thread (samples are
    root-to-leaf frame indices, weights in nanoseconds of virtual time)."""
    frames: list[dict] = []
    index: dict[tuple[str, str], int] = {}

    def frame_id(module: str, function: str) -> int:
        key = (module, function)
        if key not in index:
            index[key] = len(frames)
            frames.append({"name": function, "file": module})
        return index[key]

    _each_sample_kept(profile, "speedscope")
    threads: dict[tuple[int, int], list] = {}
    for sample in profile.samples:
        threads.setdefault((sample.pid, sample.tid), []).append(sample)
    profiles = []
    for (pid, tid), samples in sorted(threads.items()):
        stacks = []
        for sample in samples:
            stack = [frame_id("", "[truncated]")] if sample.truncated else []
            stack += [frame_id(f.module, f.name) for f in reversed(sample.frames)]
            stacks.append(stack)
        if profile.event == "insns":      # each sample stands for `interval` ns of virtual time
            unit, weight, start, end = "nanoseconds", profile.interval, samples[0].ts - profile.interval, samples[-1].ts
        else:                             # every N-th system call: a sample is a count
            unit, weight, start, end = "none", 1, 0, len(stacks)
        profiles.append({"type": "sampled", "name": f"{samples[0].comm} pid {pid} tid {tid}",
                         "unit": unit, "startValue": start, "endValue": end,
                         "samples": stacks, "weights": [weight] * len(stacks)})
    return {"$schema": SPEEDSCOPE_SCHEMA, "shared": {"frames": frames}, "profiles": profiles,
            "name": name, "activeProfileIndex": 0, "exporter": EXPORTER}


def chrome_trace(profile: Profile, extra_events: list | None = None) -> dict:
    """Chrome's trace-event format: process and thread names (ph M), one complete event (ph X)
    per sample covering the interval before it (an instant event, ph i, when samples count
    system calls), named by its leaf with its stack in args, and an instant event per module
    load."""
    _each_sample_kept(profile, "a Chrome trace")
    events: list[dict] = []
    seen_processes, seen_threads = set(), set()
    for sample in profile.samples:
        if sample.pid not in seen_processes:
            seen_processes.add(sample.pid)
            events.append({"ph": "M", "name": "process_name", "pid": sample.pid, "tid": sample.tid,
                           "args": {"name": sample.comm}})
        if (sample.pid, sample.tid) not in seen_threads:
            seen_threads.add((sample.pid, sample.tid))
            events.append({"ph": "M", "name": "thread_name", "pid": sample.pid, "tid": sample.tid,
                           "args": {"name": f"{sample.comm} {sample.tid}"}})
        leaf = sample.frames[0].name if sample.frames else "[unknown]"
        event = {"name": leaf, "cat": "sample", "pid": sample.pid, "tid": sample.tid,
                 "args": {"stack": ";".join(Profile.stack(sample))}}
        if profile.event == "insns":      # the interval before the tick, in virtual time
            event.update(ph="X", ts=_us(sample.ts - profile.interval), dur=_us(profile.interval))
        else:                             # a system call's return: a moment
            event.update(ph="i", ts=_us(sample.ts), s="t")
        events.append(event)
    for load in profile.modules:
        events.append({"ph": "i", "name": f"load {load.path}", "cat": "module", "pid": load.pid,
                       "tid": load.pid, "ts": _us(load.ts), "s": "p",
                       "args": {"base": f"{load.base:#x}", "end": f"{load.end:#x}"}})
    events += extra_events or []
    return {"traceEvents": events, "displayTimeUnit": "ns",
            "otherData": {"exporter": EXPORTER, "clock": "virtual: 1 ns per guest instruction"}}


def _each_sample_kept(profile: Profile, what: str) -> None:
    """Files on a timeline need each sample's time, which a tally does not keep (model.py)."""
    if profile.tallies:
        raise ValueError(f"{what} needs each sample's time: profile without the histogram (session.py)")


def _us(ns: int) -> float:
    return ns / 1000


def dump_json(data: dict) -> str:
    return json.dumps(data, indent=None, separators=(",", ":")) + "\n"
