"""A scripted GDB remote-protocol client for the stub's conformance tests: it starts
`trapline gdbserver --stdio -- PROGRAM`, sends packets as GDB frames them and checks
acknowledgements until no-ack mode."""
import os
import select
import subprocess
import sys
from pathlib import Path

from trapline.gdbserver.packets import PacketParser, frame, unescape

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 120.0


class ScriptedGdb:
    def __init__(self, program, args=(), probes=(), strategy="trampoline", options=(), pythonpath=()):
        command = [sys.executable, "-m", "trapline", "gdbserver", "--stdio", *options]
        for probe in probes:
            command += ["-p", probe]
        command += ["--strategy", strategy, "--", str(program), *map(str, args)]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([*map(str, pythonpath), str(REPO)]))
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env, cwd=REPO)
        self.parser = PacketParser()
        self.events: list = []
        self.ack_mode = True

    def _next_event(self, timeout=TIMEOUT):
        while not self.events:
            ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
            if not ready:
                raise TimeoutError("no answer from the stub")
            data = os.read(self.proc.stdout.fileno(), 65536)
            if not data:
                raise EOFError("the stub closed the connection")
            self.events += self.parser.feed(data)
        return self.events.pop(0)

    def write(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, payload: bytes) -> None:
        self.write(frame(payload))
        if self.ack_mode:
            assert self._next_event() == ("ack",)

    def reply(self, timeout=TIMEOUT) -> bytes:
        event = self._next_event(timeout)
        assert event[0] == "packet", event
        if self.ack_mode:
            self.write(b"+")
        return event[1]

    def ask(self, payload: bytes) -> bytes:
        self.send(payload)
        return self.reply()

    def no_ack(self) -> None:
        assert self.ask(b"QStartNoAckMode") == b"OK"
        self.ack_mode = False

    def xfer(self, obj: str, annex: str) -> bytes:
        data, offset = b"", 0
        while True:
            chunk = self.ask(f"qXfer:{obj}:read:{annex}:{offset:x},200".encode())
            data += unescape(chunk[1:])
            offset = len(data)
            if chunk[:1] == b"l":
                return data
            assert chunk[:1] == b"m", chunk

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        err = self.proc.stderr.read()
        self.proc.stdout.close()
        self.proc.stderr.close()
        return self.proc.returncode, err.decode(errors="replace")
