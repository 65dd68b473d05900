"""The debug interface: what a tool may observe of the kernel (as ptrace/uprobes offer).

Events are delivered synchronously, in the order they happen, to every subscriber:
  pre_fork(parent, child_pid, vfork)   before the child exists, with the pid it will get
  fork(parent, child), vfork(parent, child)
  fork_failed(parent, child_pid, errno) the fork/vfork announced by pre_fork did not happen
  vfork_done(parent, child)            the vfork parent is about to resume
  exec(process, path, argv)            after a successful execve committed the new image
  exit(process, status)                a process became a zombie (wait status word)
  signal(process, thread, signal, info) a signal is delivered (or takes its default action)
  signal_ignored(process, thread, signal, info)  a signal was taken and ignored (SIG_IGN, or
                                       ignored by default as SIGCHLD is): a tracer sees it still
  space_released(space)                no process uses `space` any more (its last user exited,
                                       or exec replaced its image): the last moment its memory
                                       can be read; then it is freed and its serial is never
                                       seen again. Every table keyed on the space forgets it.
  image_mapped(process, mapped)        a shared object's code was mapped after exec (ld.so
                                       loading a library, dlopen): kernel_model/images.py
  timer_tick(thread, frame)            the profiling timer interrupted `thread`: timer.py
  timer_tick_batch(thread, frames), timer_tick_tally(thread, tallies)   the ticks its C capture
                                       took, a record each or counted per PC: timer.py
A subscriber is any object with methods of those names (missing ones are skipped).

Gates (US 7,185,320): a tool may put a gate on an address space that several processes share (a
vfork child runs in its parent's Space). While it is there, every tool trap of that space (#BP
at a registered address, #UD at a registered LOCK site) goes to `gate(handler, address, frame,
thread)` instead of the handler, so that the tool can tell which process trapped — the traced
parent's trap goes on to the handler, an untraced child's is the tool's to deal with.

Tracer stops: a tool may leave a thread stopped "waiting for its tracer" (ptrace's
breakpoint stop), and registers itself as a tracer so that a deadlock report can say what the
tool itself waits for (US 7,185,320 FIG. 1).

The tracing facility (kernel_model/debug/tracing/facility.py, US 7,185,320 [0034]-[0037]): a tool traces
a process (attach), sets event flags and options per process or per thread (set_event_mask) and
signals that pass untraced (set_signal_mask); the threads that respond to an event stop and the
tool is told (`tracer.trace_stop(stop)`); it stops threads itself (stop) and resumes them, with
or without a signal (resume). The notifications above go to every subscriber regardless, unless
it subscribed to some events only (`subscribe(tool, events=(...))`).

Registers (PTRACE_GETREGS/SETREGS): a thread's registers are live in its Machine while it is
the one running there, and in its saved context otherwise (sleeping, stopped, runnable but
switched out, a new child before its first run) — kernel.py `_switch_to` keeps that invariant:
context None <=> registers live. `read_register`/`write_register` go to whichever holds them.

Instruction counts: `count_instructions(process)` makes the process's Machine count every
instruction exactly on the run's one InstructionClock (emu/icount.py), the virtual time of a
tool's records; a tool asks for it per process it follows (attach, fork child, exec'd image).

The door's parts: this class is a facade. It holds one part per concept (a class in its own
file of kernel_model/debug/, with its own state, given the narrow collaborators it needs), made
when first asked for, its module imported then (a run no tool watches makes only the events
part, and imports no other part's module: issue 31, start-up); PARTS says which part answers which of its methods, and each such method is the
part's own (same signature, same docstring) forwarded by `_forward_parts`. What the facade
does itself is what spans parts: the events of the kernel's fork, exec, exit and space
release, which tell several parts in turn, and attaching, which tells the tracing facility and
its system-call stops. No part reads another's state: where one needs another, it is given it
(or the one method it needs) when it is made, and calls it.
"""
import functools
import importlib
import inspect
import operator

from emu.errors import MachineError as MemoryFault  # noqa: F401  (no page there: a tool's EFAULT)
from emu.icount import InstructionClock

from ..errors import KernelError, TraceError, VforkParentBusy  # noqa: F401  (tools catch them)
from ..memory.vm import PROT_EXEC, PROT_READ, PROT_WRITE  # noqa: F401  (the page bits tools compare areas with)
from .events import EVENTS
from .signal_pcs import SignalFramePcs
from .syscalls import SyscallAccess

# The vocabulary tools import with the door, from the part that defines it, imported when named
# (kernel_model/debug/__init__.py re-exports it): a run with no tool imports none of it.
_VOCABULARY = {"PatchConflict": "patches", "SyscallRun": "syscalls", "TraceStop": "tracing.facility",
               "TracingFacility": "tracing.facility", "EventMask": "tracing.masks",
               "TraceEvent": "tracing.masks", "TraceOption": "tracing.masks",
               # the sampler's (timer.py): importing it loads the timer's C capture
               "CALLEE_SAVED": "timer", "WALK_REGISTERS": "timer", "CapturedFrame": "timer",
               "TickTally": "timer"}


def __getattr__(name: str):
    if name in _VOCABULARY:
        return getattr(importlib.import_module(f".{_VOCABULARY[name]}", __package__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def part_class(where: str):
    """The class of a part, "module:Class" of kernel_model/debug/ (imported on first use)."""
    module, _, name = where.partition(":")
    return getattr(importlib.import_module(f".{module}", __package__), name)


class DebugInterface:
    EVENTS = EVENTS
    ABIS = SyscallAccess.ABIS
    SIGNAL_PC_STEP = SignalFramePcs.SIGNAL_PC_STEP      # a translator's answer (tools see only the door)

    # The part (attribute, "module:Class" of kernel_model/debug/) that answers each method of
    # the door.
    PARTS = {
        ("_events", "events:DebugEvents"): "subscribe unsubscribe register_tracer tool_waits "
                                  "syscall_entry syscall_resumed syscall_exit "
                                  "syscall_interrupted stops_at_syscalls",
        ("_traps", "traps:ToolTraps"): "register_breakpoint unregister_breakpoint breakpoint_at "
                               "register_breakpoint_redirect register_breakpoint_trampoline "
                               "unregister_breakpoint_redirect "
                               "set_gate clear_gate register_invalid_opcode_site "
                               "unregister_invalid_opcode_site invalid_opcode_site "
                               "register_debug_trap debug_trap_handler tool_trap_taken "
                               "tool_traps_taken",
        ("_threads", "threads:ThreadAccess"): "current_thread deliver_page_fault deliver_exception "
                                    "live_threads read_register write_register",
        ("_patches", "patches:PatchAccess"): "read_memory read_memory_raw write_memory patch repatch unpatch "
                                   "patch_at patches_overlapping patched_addresses lift_patch "
                                   "relay_patch backpatch reinsert_patches is_backpatched "
                                   "has_patches remove_all_patches copy_patches forget_patches",
        ("_access", "access:ProcessAccess"): "cpu forget_cpu arch area_at instructions_retired symbolize "
                                    "images image_map_version image_at map_pages",
        ("_syscalls", "syscalls:SyscallAccess"): "run_syscall",
        ("_syscall_info", "syscall_stops:SyscallStops"): "syscall_abi peek peek_string threads",
        ("_facility", "tracing.facility:TracingFacility"): "detach tracer_of event_mask set_signal_mask responds "
                                        "trace_stop_of stop resume record_tool_stop forget_tool_stop "
                                        "stop_for_tracer resume_from_tracer vfork_child_of "
                                        "trace_signal trace_fork trace_vfork_done "
                                        "trace_exec",
        ("_syscall_stops", "tracing.syscall_stops:SyscallTraceStops"): "watch_syscalls_for trace_death stop_at_syscall",
        ("_restartable", "restartable:RestartableSequences"): "register_restartable restart_sequence on_switch_out "
                                                "sequence_to_finish copy_restartable "
                                                "forget_restartable",
        ("_timer", "timer:TimerAccess"): "arm_timer disarm_timer timer_capturing timer_learn timer_ticks "
                                 "timer_instructions timer_host_ns virtual_time_ns "
                                 "thread_instructions",
        ("_holds", "suspend:ThreadHolds"): "suspend_thread resume_thread hold_signals release_signals "
                                 "is_suspended space_threads live_processes",
        ("_time", "alarms:InstructionTime"): "count_instructions instruction_count at_instruction "
                                    "at_safe_point code_addresses_in_use signal_name",
        ("_run", "run:RunControl"): "set_run_controller add_code_breakpoint remove_code_breakpoint "
                              "code_breakpoints forget_code_breakpoints interrupt_guest arm_interrupt "
                              "read_fpu write_fpu kill_process processes is_alive is_alive_thread "
                              "thread_runnable post_signal next_signal take_signal",
        ("_tool_code", "tool_code:ToolCode"): "register_tool_code unregister_tool_code forget_tool_code "
                                  "tool_code_fault",
        ("_detach", "detach:DetachAccess"): "step_thread thread_can_step signal_frame_pcs "
                                   "set_signal_frame_pc stack_range unmap_tool_pages "
                                   "keep_stale_range stale_code_fault copy_stale_ranges "
                                   "forget_stale_ranges",
        ("_exe", "exe:ExecutableAccess"): "executable_path thread_name fd_path",
        ("_descriptors", "descriptors:DescriptorAccess"): "fd_device fd_socket cwd_path",
        ("_opened", "opened_files:OpenedFiles"): "watch_opened_files opened_files",
        ("_guest_files", "guest_files:GuestFiles"): "open_guest_file read_guest_file write_guest_file "
                                         "stat_guest_file close_guest_file read_guest_link "
                                         "unlink_guest_path",
        ("_watch", "watch:WatchAccess"): "add_watchpoint remove_watchpoint settle_watch_stop "
                                 "forget_watchpoints",
        ("_signal_pcs", "signal_pcs:SignalFramePcs"): "register_signal_pc_translator "
                                         "unregister_signal_pc_translator signal_frame_pc "
                                         "signal_frame_built signal_return_pc "
                                         "forget_signal_frame_pcs",
        ("_ptrace", "ptrace_links:PtraceLinks"): "ptrace_attach ptrace_detach is_ptraced",
        ("_interrupted", "interrupted_calls:InterruptedCalls"): "interrupted_syscall",
        ("_aliases", "code_aliases:CodeAliases"): "register_code_alias unregister_code_aliases "
                                   "code_alias_original pass_code_alias_once code_alias_passes "
                                   "code_aliases_of copy_code_aliases forget_code_aliases",
    }

    # What each part is made with, besides nothing: the door's attributes (dotted: a part's
    # method), in the order of its constructor's parameters. code_breakpoints is a part that
    # answers no method: run control places them, aliases carry them.
    MADE_WITH = {"_traps": ("_kernel",), "_threads": ("_kernel",), "_syscalls": ("_kernel",),
                 "_facility": ("_kernel",), "_syscall_stops": ("_kernel", "_facility", "_events"),
                 "_timer": ("_kernel", "_events"), "_holds": ("_kernel",),
                 "_time": ("_kernel", "instruction_clock"), "_aliases": ("_code_breakpoints",),
                 "_run": ("_kernel", "_aliases", "_code_breakpoints"), "_detach": ("_kernel",),
                 "_opened": ("_events",), "_watch": ("_kernel",), "_guest_files": ("_kernel",),
                 "_signal_pcs": ("_detach.step_thread",), "_interrupted": ("_threads",)}
    OTHER_PARTS = {"_code_breakpoints": "space_hooks:SpaceHooks"}

    # The parts (PARTS, OTHER_PARTS), declared: each is an instance attribute once made.
    _events: "DebugEvents"
    _traps: "ToolTraps"
    _threads: "ThreadAccess"
    _patches: "PatchAccess"
    _access: "ProcessAccess"
    _syscalls: "SyscallAccess"
    _syscall_info: "SyscallStops"
    _facility: "TracingFacility"
    _syscall_stops: "SyscallTraceStops"
    _restartable: "RestartableSequences"
    _timer: "TimerAccess"
    _holds: "ThreadHolds"
    _time: "InstructionTime"
    _run: "RunControl"
    _tool_code: "ToolCode"
    _detach: "DetachAccess"
    _exe: "ExecutableAccess"
    _descriptors: "DescriptorAccess"
    _opened: "OpenedFiles"
    _guest_files: "GuestFiles"
    _watch: "WatchAccess"
    _signal_pcs: "SignalFramePcs"
    _aliases: "CodeAliases"
    _ptrace: "PtraceLinks"
    _interrupted: "InterruptedCalls"
    _code_breakpoints: "SpaceHooks"

    def __init__(self, kernel=None):
        # One clock for every process of the run, so that timestamps of parents, fork
        # children and exec'd images are one continuous order.
        self.instruction_clock = InstructionClock()
        self._kernel = kernel
        # The parts are made when first asked for (__getattr__): a run that no tool watches
        # makes the few the kernel tells of its events, and imports no other part's module.

    def __getattr__(self, name: str):
        """A part not made yet: make it now, with what MADE_WITH says, and keep it (the next
        lookup finds it on the instance and never comes here)."""
        where = _PART_HOMES.get(name)
        if where is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        made_with = [operator.attrgetter(path)(self) for path in self.MADE_WITH.get(name, ())]
        part = self.__dict__[name] = part_class(where)(*made_with)     # one of the parts declared above
        return part

    def _made(self, attribute: str):
        """The part if it was made, else None: a part never made holds nothing, so an event
        that only updates or forgets its state has nothing to tell it."""
        return self.__dict__.get(attribute)

    # ---- the parts' state that tools and the kernel read as attributes -----------------------
    @property
    def subscribers(self) -> list:
        return self._events.subscribers

    @property
    def tracers(self) -> list:
        return self._events.tracers

    @property
    def syscall_watchers(self) -> list:
        """What the dispatcher tells of every call (empty: nobody watches, it tells nothing)."""
        return self._events.syscall_watchers

    @property
    def syscall_events(self):
        """The part whose `syscall_watchers` is always the current list (the dispatcher keeps
        the part, and reads the list at each call)."""
        return self._events

    def syscall_watchers_of(self, name: str):
        """The watchers if one watches the call `name`, else () (events.py)."""
        return self._events.syscall_watchers_of(name)

    @property
    def run_controller(self):
        """A debugger's run controller, asked by the run loop (run.py), or None."""
        run = self._made("_run")
        return run.run_controller if run else None

    @property
    def instruction_alarms(self):
        """The run's alarms on its instruction clock (alarms.py), which the run loop fires."""
        return self._time.instruction_alarms

    # ---- attaching: the facility, and its system-call stops when a mask asks for them --------
    def attach(self, process, tracer, events=None, options=None) -> None:
        """Trace `process`: `tracer.trace_stop(stop)` hears of its threads' stops (`events`
        a TraceEvent, `options` a TraceOption; None: NONE)."""
        events, options = _masks(events, options)
        self._facility.attach(process, tracer, events, options)
        self._syscall_stops.watch_syscalls_for(events)

    def set_event_mask(self, target, events, options=None) -> None:
        """Set the event flags and options of a traced process or of one of its threads
        (`target` is a Process or a Thread); the signal mask is kept."""
        events, options = _masks(events, options)
        self._facility.set_event_mask(target, events, options)
        self._syscall_stops.watch_syscalls_for(events)

    # ---- a space's handlers, over every part that keeps some ---------------------------------
    # These and the kernel's events below tell only the parts that were made: one never made
    # holds nothing to copy, forget or stop.
    def clear_space(self, space) -> None:
        """Forget every handler of `space` (a detached fork child's copy): its traps, if any
        were left, would be the program's own."""
        if traps := self._made("_traps"):
            traps.forget_traps(space)
        if tool_code := self._made("_tool_code"):
            tool_code.forget_tool_code(space)

    def copy_breakpoints(self, parent_space, child_space) -> None:
        """fork: the child's copy of the memory holds the same int3s (and LOCK patches); give
        them the same handlers (and the child's Machine the same #UD sites), and the same
        table of patches and original bytes (kernel_model/debug/patches.py)."""
        if traps := self._made("_traps"):
            traps.copy_traps(parent_space, child_space)
        if restartable := self._made("_restartable"):
            restartable.copy_restartable(parent_space, child_space)
        if aliases := self._made("_aliases"):
            aliases.copy_code_aliases(parent_space, child_space)
        if patches := self._made("_patches"):
            patches.copy_patches(parent_space, child_space)
        if detach := self._made("_detach"):
            detach.copy_stale_ranges(parent_space, child_space)     # after a detach (detach.py)

    def holds_stopped(self, thread) -> bool:
        """The run loop asks before running a thread whether its tracer holds it stopped
        (tracing/facility.py). Only a tracer stops threads, and the facility is made by the
        first one: a run that none traces asks nothing of it (it made the facility, importing
        its module, for every plain run: issue 31, bench/trace_cost.py)."""
        facility = self.__dict__.get("_facility")
        return facility is not None and facility.holds_stopped(thread)

    # ---- the kernel's events (module docstring) ----------------------------------------------
    def pre_fork(self, parent, child_pid: int, *, vfork: bool) -> None:
        self._events.emit("pre_fork", parent, child_pid, vfork=vfork)

    def fork(self, parent, child) -> None:
        self._events.emit("fork", parent, child)
        if facility := self._made("_facility"):
            facility.trace_fork(parent, child, vfork=False)

    def fork_failed(self, parent, child_pid: int, errno: int) -> None:
        self._events.emit("fork_failed", parent, child_pid, errno)

    def vfork(self, parent, child) -> None:
        self._events.emit("vfork", parent, child)
        if facility := self._made("_facility"):
            facility.trace_fork(parent, child, vfork=True)

    def vfork_done(self, parent, child) -> None:
        self._events.emit("vfork_done", parent, child)
        if facility := self._made("_facility"):
            facility.trace_vfork_done(parent, child)

    def exec(self, process, path: bytes, argv) -> None:
        self._events.emit("exec", process, path, argv)
        if facility := self._made("_facility"):
            facility.trace_exec(process)

    def exit(self, process, status: int) -> None:
        self._events.emit("exit", process, status)
        self.trace_exit(process, status)

    def trace_exit(self, process, status: int) -> None:
        """The process is gone: its tracer hears of it if EXIT is in a mask; its state goes."""
        if facility := self._made("_facility"):
            facility.trace_exit(process, status)
        if syscall_stops := self._made("_syscall_stops"):
            syscall_stops.forget_process(process)

    def signal(self, process, thread, signal: int, info: dict | None = None) -> None:
        self._events.emit("signal", process, thread, signal, info)

    def signal_ignored(self, process, thread, signal: int, info: dict | None = None) -> None:
        self._events.emit("signal_ignored", process, thread, signal, info)

    def signal_stopped(self, process, thread, signal: int, info: dict | None = None) -> None:
        """`thread` took the stop signal and its process stopped (signals/group_stop.py)."""
        self._events.emit("signal_stopped", process, thread, signal, info)

    def image_mapped(self, process, mapped) -> None:
        """A shared object's code was mapped in `process` after exec (ld.so loading a library,
        a dlopen): `mapped` is its MappedImage. The program and ld.so come with `exec`."""
        if timer := self._made("_timer"):
            timer.forget_timer_rules(process)
        self._events.emit("image_mapped", process, mapped)

    def image_unmapped(self, process, mapped) -> None:
        """An object's first page was unmapped from `process` (dlclose): `mapped` is gone."""
        if timer := self._made("_timer"):
            timer.forget_timer_rules(process)
        self._events.emit("image_unmapped", process, mapped)

    # (part, its method that forgets a space), in the order they forget it
    _FORGET_SPACE = (("_access", "forget_cpu"), ("_patches", "forget_patches"),
                     ("_run", "forget_code_breakpoints"), ("_watch", "forget_watchpoints"),
                     ("_detach", "forget_stale_ranges"), ("_restartable", "forget_restartable"),
                     ("_signal_pcs", "forget_signal_frame_pcs"), ("_aliases", "forget_code_aliases"))

    def space_released(self, space) -> None:
        """Tools forget `space` (their tables are keyed on `space.serial`), then so do the
        kernel's handler tables; the kernel frees the space right after."""
        self._events.emit("space_released", space)
        self.clear_space(space)
        for attribute, forget in self._FORGET_SPACE:
            if part := self._made(attribute):
                getattr(part, forget)(space)


def _masks(events, options):
    """A tool's masks, NONE where not given (the masks' module is imported by the first tool
    that traces: a run with none does without it)."""
    from .tracing.masks import TraceEvent, TraceOption
    return (TraceEvent.NONE if events is None else events,
            TraceOption.NONE if options is None else options)


class _Forwarder:
    """A door method nobody has looked up yet: the first lookup (on the class or an instance)
    imports its part's module and puts in its place, on DebugInterface, the part's static
    function as it is (it keeps no state) or a method that calls the part's (its name,
    signature and docstring); every later lookup is a plain one and never comes here."""

    def __init__(self, attribute: str, where: str, name: str):
        self.attribute, self.where, self.name = attribute, where, name

    def __get__(self, door, owner=None):
        function = _forwarded(self.attribute, part_class(self.where), self.name)
        setattr(DebugInterface, self.name, function)
        return function.__get__(door, DebugInterface)


def _forward_parts(door) -> None:
    """Give `door` each method PARTS names, as a _Forwarder until it is first looked up."""
    for (attribute, where), names in door.PARTS.items():
        for name in names.split():
            if name in vars(door):
                raise TypeError(f"DebugInterface.{name} is both its own and {where}'s")
            setattr(door, name, _Forwarder(attribute, where, name))


def _forwarded(attribute: str, part, name: str):
    function = inspect.getattr_static(part, name)
    if isinstance(function, staticmethod):
        return function
    method = operator.attrgetter(f"{attribute}.{name}")     # self.<part>.<name>, in one C call

    @functools.wraps(function)
    def forward(self, *args, **kwargs):
        return method(self)(*args, **kwargs)
    return forward


_forward_parts(DebugInterface)
# Where each part is made from (module:Class), by attribute: PARTS's and the OTHER_PARTS.
_PART_HOMES = {attribute: where for attribute, where in DebugInterface.PARTS} | DebugInterface.OTHER_PARTS
