"""General query and set packets (GDB manual, "General Query Packets"): qSupported and the
features this stub offers, the target description, auxv and exec-file transfers, the thread
list, signal dispositions, no-ack mode. Mixed into GdbServer."""
from .packets import escape
from .ptid import format_ptid
from .signals import linux_signal
from .target_xml import target_xml

PACKET_SIZE = 0x4000
FEATURES = (f"PacketSize={PACKET_SIZE:x}", "QStartNoAckMode+", "swbreak+", "hwbreak+",
            "multiprocess+", "qXfer:features:read+", "qXfer:auxv:read+",
            "qXfer:exec-file:read+", "qXfer:threads:read+", "vContSupported+",
            "QPassSignals+", "QProgramSignals+")


class QueryPackets:
    def query(self, text: str) -> bytes:
        name = text.split(":", 1)[0].split(",", 1)[0]
        if name == "qSupported":
            wanted = text.partition(":")[2].split(";")
            offered = list(FEATURES)
            for event, attribute in (("fork-events+", "report_forks"), ("vfork-events+", "report_vforks"),
                                     ("exec-events+", "report_execs")):
                if event in wanted:              # reported only to a GDB that asks for them
                    setattr(self.debugger, attribute, True)
                    offered.append(event)
            return ";".join(offered).encode()
        if name == "QStartNoAckMode":
            self.conn.send(b"OK")            # acknowledged in the old mode, then no more acks
            self.conn.ack_mode = False
            return None
        if name == "qXfer":
            return self.xfer(text)
        if name == "qfThreadInfo":
            ids = ",".join(format_ptid(t.process.pid, t.tid) for t in self.debugger.threads())
            return f"m{ids}".encode() if ids else b"l"
        if name == "qsThreadInfo":
            return b"l"
        if name == "qC":
            thread = self.g_thread or self.find_thread(-1, -1)
            return f"QC{format_ptid(thread.process.pid, thread.tid)}".encode() if thread else b""
        if name == "qAttached":
            return b"0"                      # we started it: quitting GDB kills it
        if name == "qSymbol":
            return b"OK"
        if name == "QPassSignals":       # GDB numbers; the debugger speaks Linux's
            self.debugger.pass_signals = {linux_signal(s) for s in _signal_list(text)} - {0}
            return b"OK"
        if name == "QProgramSignals":    # the signals a resume may deliver: all of them here
            return b"OK"
        return b""

    def xfer(self, text: str) -> bytes:
        """qXfer:OBJECT:read:ANNEX:OFFSET,LENGTH -> m<data> (more follows) or l<data> (last)."""
        try:
            _, obj, op, annex, span = text.split(":", 4)
            offset, length = (int(x, 16) for x in span.split(","))
        except ValueError:
            return b"E01"
        if op != "read":
            return b""
        data = self._xfer_object(obj, annex)
        if data is None:
            return b"E00"
        chunk = data[offset:offset + length]
        return (b"m" if offset + length < len(data) else b"l") + escape(chunk)

    def _xfer_object(self, obj: str, annex: str) -> bytes | None:
        if obj == "features":
            return target_xml(self._arch_of_g()) if annex == "target.xml" else None
        if obj == "auxv":
            thread = self.g_thread
            return self.auxv.get(thread.process.pid, b"") if thread is not None else None
        if obj == "exec-file":
            return self._exec_file(annex)
        if obj == "threads":
            return self._threads_xml()
        return None

    def _threads_xml(self) -> bytes:
        """GDB manual, "Thread List Format": every debugged thread, with its name (comm)."""
        from xml.sax.saxutils import quoteattr
        lines = ['<?xml version="1.0"?>', "<threads>"]
        for thread in self.debugger.threads():
            name = self.debugger.debug.thread_name(thread).decode(errors="replace")
            lines.append(f'<thread id="{format_ptid(thread.process.pid, thread.tid)}" '
                         f'name={quoteattr(name)}/>')
        lines.append("</threads>")
        return "\n".join(lines).encode()

    def _arch_of_g(self) -> str:
        """The architecture of the thread GDB looks at: after an exec it may be the other one."""
        thread = self.g_thread
        return self.debugger.debug.arch(thread.process).name if thread is not None else self.arch

    def _exec_file(self, annex: str) -> bytes | None:
        """The program file of process ANNEX (hex pid; empty: the current one), which an exec
        changes: GDB asks again for the new program's symbols."""
        try:
            pid = int(annex, 16) if annex else None
        except ValueError:
            return None
        if pid is None and self.g_thread is not None:
            pid = self.g_thread.process.pid
        process = self.debugger.processes.get(pid)
        if process is None or not self.debugger.debug.is_alive(process):
            return self.exec_path.encode() if annex == "" else None
        return self.debugger.debug.executable_path(process)


def _signal_list(text: str) -> set[int]:
    _, _, rest = text.partition(":")
    return {int(part, 16) for part in rest.split(";") if part}
