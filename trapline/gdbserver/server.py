"""The GDB remote stub: a thin protocol layer on the debugger (instrumenter/debugger/).

The debugger calls `on_stop(event)` at every stop, with the world stopped; the server sends
the stop reply GDB waits for (none for the initial stop: GDB asks with `?`), then answers
packets until one resumes the guest (vCont, c, s, C, S), kills it (k, vKill) or detaches (D),
and returns. Queries live in queries.py, register and memory packets in access.py, Host I/O
(vFile, the guest's files) in host_io.py.
"""
import time

from instrumenter.debugger.events import (BREAKPOINT, EXEC, EXITED, FORK, INITIAL, VFORK, VFORK_DONE,
                                          WATCH)
from instrumenter.errors import InstrumenterError
from kernel_model.debug import VforkParentBusy

from .access import AccessPackets
from .connection import ConnectionClosed
from .host_io import HostIoPackets
from .ptid import ALL, ANY, format_ptid, parse_ptid
from .queries import QueryPackets
from .signals import gdb_signal, linux_signal


WATCH_REPLY = {"write": "watch", "read": "rwatch", "access": "awatch"}
WATCH_KINDS = {"2": "write", "3": "read", "4": "access"}     # Z2, Z3, Z4


class Resume(Exception):
    """A packet resumed, killed or detached: on_stop returns to the run loop."""


class GdbServer(QueryPackets, AccessPackets, HostIoPackets):
    def __init__(self, connection, debugger, arch: str, exec_path: str):
        self.conn = connection
        self.debugger = debugger
        self.arch = arch
        self.exec_path = exec_path
        self.g_thread = None                 # Hg: the thread g/p/m/Z apply to
        self.c_thread = None                 # Hc (legacy c/s)
        self.stop_reply = b"S05"
        self.exited = False                  # W/X sent for the last debugged process
        self.closed = False
        self.auxv: dict[int, bytes] = {}     # pid -> auxv words, read at its initial stop
        self.on_detach = None                # callable(whole=) once GDB detached (session.py)
        self.host_fs_pid = 0                 # vFile:setfs (host_io.py): 0, the sandbox's root
        self.host_files: dict[int, object] = {}    # vFile:open's descriptors -> guest files

    # ---- stops ---------------------------------------------------------------------------
    def on_stop(self, event) -> None:
        if self.closed:
            return
        try:
            if event.kind == EXITED:
                self._report_exit(event)
                if not self.debugger.live_processes():
                    self.exited = True
                    self.debugger.detach()
                    return
            else:
                self._note_stop(event)
                if event.kind != INITIAL:
                    self.conn.send(self.stop_reply)
            self.serve()
        except ConnectionClosed:
            self._connection_lost()

    def _note_stop(self, event) -> None:
        thread = event.thread
        self.g_thread = self.c_thread = thread
        if event.kind in (INITIAL, EXEC):          # the new image's, before it runs
            from instrumenter.debugger.auxv import read_auxv
            self.auxv[thread.process.pid] = read_auxv(self.debugger.debug, thread)
        reason = "swbreak:;" if event.kind == BREAKPOINT else ""
        if event.kind in (FORK, VFORK):
            child = event.child
            reason = f"{event.kind}:{format_ptid(child.pid, child.pid)};"
        elif event.kind == VFORK_DONE:
            reason = "vforkdone:;"
        elif event.kind == EXEC:                   # GDB manual, "Stop Reply Packets": exec:HEX
            reason = f"exec:{event.path.hex()};"
        elif event.kind == WATCH:                  # watch:ADDR / rwatch:ADDR / awatch:ADDR
            reason = f"{WATCH_REPLY[event.watch]}:{event.address:x};"
        # The stop reason goes first: GDB reads "fork:" before "thread:" as gdbserver sends it.
        self.stop_reply = (f"T{gdb_signal(event.signal):02x}{reason if event.kind != BREAKPOINT else ''}"
                           f"thread:{format_ptid(thread.process.pid, thread.tid)};"
                           f"{reason if event.kind == BREAKPOINT else ''}").encode()

    def _report_exit(self, event) -> None:
        status = event.status
        pid = f";process:{event.process.pid:x}"
        if status & 0x7F:
            self.stop_reply = f"X{gdb_signal(status & 0x7F):02x}{pid}".encode()
        else:
            self.stop_reply = f"W{(status >> 8) & 0xFF:02x}{pid}".encode()
        self.conn.send(self.stop_reply)

    def finish(self, wait_status: int, process) -> None:
        """The run is over: report the exit if GDB has not heard of it yet."""
        if self.closed or self.exited or self.debugger.detached:
            return
        from instrumenter.debugger.events import StopEvent
        try:
            self._report_exit(StopEvent(EXITED, process=process, status=wait_status))
        except ConnectionClosed:
            pass
        self.exited = True

    def wait_for_user(self) -> None:
        """Nothing can run but threads GDB holds stopped (holds.py): the program hangs, as it
        would under gdbserver, until GDB sends a Ctrl-C (the reader thread sets the request)
        or hangs up."""
        while not self.debugger.interrupt_requested:
            if self.conn.closed:
                self._connection_lost()
                return
            time.sleep(0.02)

    def _connection_lost(self) -> None:
        """GDB went away without detaching: the program dies with it, as under gdbserver."""
        self.closed = True
        self.close_host_files()
        self.debugger.kill()

    # ---- the packet loop --------------------------------------------------------------------
    def serve(self) -> None:
        while True:
            packet = self.conn.receive()
            try:
                reply = self.handle(packet)
            except Resume:
                return
            if reply is not None:
                self.conn.send(reply)

    def handle(self, packet: bytes) -> bytes | None:
        text = packet.decode("latin-1")
        if not text:
            return b""
        head = text[0]
        if head == "?":
            return self.stop_reply
        if head in "qQ":
            return self.query(text)
        if head == "v":
            return self.v_packet(text)
        if head == "H":
            return self.set_thread(text)
        if head == "T":
            return self.thread_alive(text[1:])
        if head in "gGpPmMX":
            return self.access(head, text, packet)
        if head in "Zz":
            return self.breakpoint_packet(text)
        if head in "cCsS":
            self.legacy_resume(text)
        if head == "k":
            self.close_host_files()
            self.debugger.kill()
            raise Resume()
        if head == "D":
            return self.detach(text)
        return b""

    # ---- threads -------------------------------------------------------------------------------
    def find_thread(self, pid: int, tid: int):
        if tid in (ALL, ANY):
            threads = [t for t in self.debugger.threads() if pid in (ALL, ANY) or t.process.pid == pid]
            return threads[0] if threads else None
        return self.debugger.thread(pid, tid)

    def set_thread(self, text: str) -> bytes:
        try:
            thread = self.find_thread(*parse_ptid(text[2:]))
        except ValueError:
            return b"E01"
        if thread is None:
            return b"E01"
        if text[1] == "g":
            self.g_thread = thread
        else:
            self.c_thread = thread
        return b"OK"

    def thread_alive(self, text: str) -> bytes:
        try:
            thread = self.find_thread(*parse_ptid(text))
        except ValueError:
            return b"E01"
        return b"OK" if thread is not None else b"E01"

    # ---- resuming ------------------------------------------------------------------------------
    def v_packet(self, text: str) -> bytes | None:
        if text == "vCont?":
            return b"vCont;c;C;s;S"
        if text.startswith("vCont;"):
            return self.vcont(text[6:].split(";"))
        if text.startswith("vKill"):
            self.close_host_files()
            self.debugger.kill()
            self.conn.send(b"OK")
            raise Resume()
        if text == "vMustReplyEmpty":
            return b""
        if text.startswith("vFile:"):
            return self.host_io(text)
        return b""

    def vcont(self, actions: list[str]) -> bytes:
        """Each thread takes the first action that names it (or has no thread id)."""
        steps, signals, claimed = [], {}, set()
        for action in actions:
            verb, _, target = action.partition(":")
            signal = linux_signal(int(verb[1:], 16)) if verb[:1] in ("C", "S") else 0
            threads = self.debugger.threads()
            if target:
                pid, tid = parse_ptid(target)
                threads = [t for t in threads
                           if (pid in (ALL, ANY) or t.process.pid == pid) and tid in (ALL, ANY, t.tid)]
            for thread in threads:
                if thread.tid in claimed:
                    continue
                claimed.add(thread.tid)
                if verb[:1] in ("s", "S"):
                    steps.append(thread)
                if signal:
                    signals[thread.tid] = signal
        everyone = {t.tid for t in self.debugger.threads()}
        resumed = [t for t in self.debugger.threads() if t.tid in claimed]
        try:
            self.debugger.resume(steps=steps, signals=signals,
                                 only=resumed if claimed != everyone else None)
        except (InstrumenterError, VforkParentBusy) as refused:   # a vfork parent alone (forks.py)
            return b"E." + str(refused).encode()
        raise Resume()

    def legacy_resume(self, text: str) -> None:
        thread = self.c_thread or self.g_thread
        signal = linux_signal(int(text[1:3], 16)) if text[0] in "CS" and len(text) >= 3 else 0
        steps = [thread] if text[0] in "sS" and thread is not None else []
        self.debugger.resume(steps=steps, signals={thread.tid: signal} if signal and thread else None)
        raise Resume()

    def detach(self, text: str = "D") -> None:
        """D (everything) or D;PID (one process: a fork child GDB does not follow)."""
        pid = int(text[2:], 16) if text.startswith("D;") else None
        one = pid is not None and len(self.debugger.live_processes()) > 1
        if self.on_detach is not None:
            self.on_detach(whole=not one)    # before the OK, after which GDB may hang up
        if one:
            self.debugger.detach_process(pid)
            return b"OK"
        self.conn.send(b"OK")
        self.close_host_files()
        self.debugger.detach()
        raise Resume()

    # ---- breakpoints -------------------------------------------------------------------------
    def breakpoint_packet(self, text: str) -> bytes:
        """Z/z TYPE,ADDR,KIND: 0 and 1 breakpoints, 2-4 watchpoints of KIND bytes."""
        kind, _, rest = text[1:].partition(",")
        if kind not in ("0", "1", "2", "3", "4"):
            return b""
        try:
            address, length = (int(part, 16) for part in rest.split(",")[:2])
        except ValueError:
            return b"E01"
        process = self.g_thread.process if self.g_thread is not None else None
        if kind in WATCH_KINDS:
            if length <= 0:
                return b"E01"
            change = self.debugger.insert_watchpoint if text[0] == "Z" else self.debugger.remove_watchpoint
            change(address, length, WATCH_KINDS[kind], process)
            return b"OK"
        if text[0] == "Z":
            self.debugger.insert_breakpoint(address, process)
        else:
            self.debugger.remove_breakpoint(address, process)
        return b"OK"

