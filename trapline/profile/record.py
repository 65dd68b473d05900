"""`trapline profile --record FILE` and `trapline report FILE`: the patent's trace, written while
the program runs and processed later into the same report (US 7,823,129: the trace phases).

Format (version 3): JSON Lines, one record per line, each an object whose "t" says its kind.
  {"t": "header", "format": "trapline-profile", "version": 3, "interval": N, "event": "insns",
   "mode": "stack"|"pc", "command": [...], "walk_up": true|false}   always the first line
  start-up records: {"t": "thread", "pid", "tid", "comm"} for each thread that exists,
   {"t": "module", "ts", "pid", "path", "base", "end"} for each object loaded, then
  {"t": "startup-done"}                                 all start-up information written
  {"t": "name", "id": K, "module": M, "function": F|null}   the ID -> name record of a frame
                                                        name, written before its first use
  {"t": "sample", "ts", "pid", "tid", "comm", "frames": [[K, offset, address], ...],
   "truncated": reason|null}                            frames from the interrupted PC outwards
  {"t": "interrupt", "ts", "pid", "tid", "vector": 32, "ip", "sp"}   a timer interrupt, right
                                                        before the sample it took
  {"t": "switch", "ts", "pid", "tid", "prev_pid", "prev_tid"}   the CPU went on with another
                                                        thread (prev 0/0: the first slice)
  {"t": "module", ...}                                  an object loaded while the program ran
  {"t": "unload", "ts", "pid", "path", "base", "end"}   an object unloaded (dlclose)
  {"t": "walkup-step", "ts", "action", "kind", "function", "level", "hot_spot"}   with --walk-up:
                                                        a hook inserted or removed, a walk ended
  when tracing stops:
  {"t": "line", "module", "address", "file", "line"}    the source line of a sampled PC (DWARF)
  {"t": "walkup", "report": {...}}                      with --walk-up: walkup.json's content
                                                        (the chains, their metrics, the comparison,
                                                        and "hooked": each hooked function's span)
  {"t": "end", "samples": N, "exit_code": C}
Records are buffered and written when the buffer fills or tracing stops. `ts` is virtual time:
guest instructions of the run. `trapline report FILE -o DIR` writes the live run's files from
it: the walk-up's Chrome-trace events (walkup_report.chrome_events) come from the walkup record's
report — a track per hooked function from "hooked", an instant event per timeline step — the
same function and data as the live run's, so the Chrome trace is the same.
Older versions are still read. Version 2 lacks "hooked" (its walkup record holds walkup.json
version 1): `report -o` then writes the walk-up's steps (ph i) and its "walk-up" track name but
not the hooked functions' tracks (ph X spans and their thread names), which cannot be rebuilt
exactly: the timeline names a function without its object, and the chains keep neither the
caller list's order (the tracks' tids) nor the own level of a function met by a joined walk.
Version 1 has no interrupt, switch, unload, line or walk-up records.
"""
from __future__ import annotations

import json

from instrumenter.profiler.sampler import Interrupt, ModuleLoad, ModuleUnload, Sample, ThreadSwitch
from instrumenter.profiler.symbolize import Frame

from ..errors import UsageError
from .lines import SourceLine
from .model import Profile

FORMAT, VERSION = "trapline-profile", 3
READS = (1, 2, 3)
BUFFER_RECORDS = 4096


class TraceWriter:
    def __init__(self, path: str, profile: Profile, *, buffer_records: int = BUFFER_RECORDS,
                 walk_up: bool = False):
        try:
            self._out = open(path, "w", encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--record {path}: {exc.strerror or exc}") from None
        self._buffer: list[str] = []
        self._limit = buffer_records
        self._names: dict[tuple[str, str | None], int] = {}
        self.started = False
        self._emit({"t": "header", "format": FORMAT, "version": VERSION, "interval": profile.interval,
                    "event": profile.event, "mode": profile.mode, "command": profile.command,
                    "walk_up": walk_up})

    # ---- the phases ----------------------------------------------------------------------------
    def startup(self, threads, modules) -> None:
        """`threads`: (pid, tid, comm) that exist; `modules`: the ModuleLoads so far."""
        for pid, tid, comm in threads:
            self._emit({"t": "thread", "pid": pid, "tid": tid, "comm": comm})
        for load in modules:
            self.module(load)
        self._emit({"t": "startup-done"})
        self.started = True

    def module(self, load: ModuleLoad) -> None:
        self._emit({"t": "module", "ts": load.ts, "pid": load.pid, "path": load.path,
                    "base": load.base, "end": load.end})

    def sample(self, sample: Sample) -> None:
        frames = [[self._name_id(f.module, f.function), f.offset, f.address] for f in sample.frames]
        self._emit({"t": "sample", "ts": sample.ts, "pid": sample.pid, "tid": sample.tid,
                    "comm": sample.comm, "frames": frames, "truncated": sample.truncated})

    def event(self, record) -> None:
        """An Interrupt, ThreadSwitch or ModuleUnload of the sampler (instrumenter/profiler)."""
        if isinstance(record, Interrupt):
            self._emit({"t": "interrupt", **record._asdict()})
        elif isinstance(record, ThreadSwitch):
            self._emit({"t": "switch", **record._asdict()})
        elif isinstance(record, ModuleUnload):
            self._emit({"t": "unload", **record._asdict()})

    def walkup_step(self, step) -> None:
        self._emit({"t": "walkup-step", "ts": step.ts, "action": step.action, "kind": step.kind,
                    "function": step.function.name, "level": step.level,
                    "hot_spot": step.hot_spot.name})

    def close(self, profile: Profile, walkup: dict | None = None) -> None:
        """Tracing stops: the source lines found, the walk-up's report, the end record."""
        for (module, address), line in sorted(profile.lines.items()):
            self._emit({"t": "line", "module": module, "address": address, "file": line.file,
                        "line": line.line})
        if walkup is not None:
            self._emit({"t": "walkup", "report": walkup})
        self._emit({"t": "end", "samples": profile.total, "exit_code": profile.exit_code})
        self._flush()
        self._out.close()

    # ---- buffering -----------------------------------------------------------------------------
    def _name_id(self, module: str, function: str | None) -> int:
        key = (module, function)
        known = self._names.get(key)
        if known is None:
            known = self._names[key] = len(self._names)
            self._emit({"t": "name", "id": known, "module": module, "function": function})
        return known

    def _emit(self, record: dict) -> None:
        self._buffer.append(json.dumps(record, separators=(",", ":")))
        if len(self._buffer) >= self._limit:
            self._flush()

    def _flush(self) -> None:
        if self._buffer:
            self._out.write("\n".join(self._buffer) + "\n")
            self._buffer.clear()
            self._out.flush()


def read_trace(path: str) -> Profile:
    """The profile a recorded trace holds; a file that is not one is a one-line UsageError."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        records = [json.loads(line) for line in lines if line.strip()]
        return _profile_of(records)
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        raise UsageError(f"{path}: not a trapline profile trace ({type(exc).__name__}: {exc})") from None


def _profile_of(records: list[dict]) -> Profile:
    header = records[0] if records else {}
    if header.get("t") != "header" or header.get("format") != FORMAT:
        raise ValueError("no trapline-profile header")
    if header["version"] not in READS:
        raise ValueError(f"format version {header['version']}, this trapline reads "
                         f"{', '.join(map(str, READS))}")
    profile = Profile(interval=header["interval"], mode=header["mode"], event=header["event"],
                      command=list(header["command"]))
    names: dict[int, tuple[str, str | None]] = {}
    for record in records[1:]:
        kind = record["t"]
        if kind == "name":
            names[record["id"]] = (record["module"], record["function"])
        elif kind == "module":
            profile.add_module(ModuleLoad(record["ts"], record["pid"], record["path"],
                                          record["base"], record["end"]))
        elif kind == "sample":
            frames = tuple(Frame(*names[k], offset, address) for k, offset, address in record["frames"])
            profile.add(Sample(record["ts"], record["pid"], record["tid"], record["comm"], frames,
                               record["truncated"]))
        elif kind == "interrupt":
            profile.interrupts += 1
        elif kind == "switch":
            profile.add_switch(ThreadSwitch(record["ts"], record["pid"], record["tid"],
                                            record["prev_pid"], record["prev_tid"]))
        elif kind == "unload":
            profile.unloads.append(ModuleUnload(record["ts"], record["pid"], record["path"],
                                                record["base"], record["end"]))
        elif kind == "walkup":
            profile.walkup = record["report"]
        elif kind == "line":
            profile.lines[(record["module"], record["address"])] = SourceLine(record["file"], record["line"])
        elif kind == "end":
            profile.exit_code = record["exit_code"]
    return profile
