"""--scheduler on a loaded host: a scheduler that takes the TCP connection but answers Dask's
handshake late is reached, not "cannot reach it" (execute.py: the handshake had 5 s, which a
scheduler's event loop on a host at load average 500 can miss; an address that takes no
connection at all still fails at once, tests/unit/trapline/experiments/test_spec.py).

The late answer is made, not waited for: the scheduler is reached through a relay on localhost
that takes every connection at once (the TCP connection is made) and holds it for longer than
the old 5 s before it relays a byte of it."""
import socket
import threading
import time

import distributed
import pytest
from click.testing import CliRunner

from trapline.cli import main

HELD_S = 6.0          # longer than the 5 s the handshake had
SPEC = """
name = "slow-scheduler"
[program]
sample = "hello"
[run]
probes = ["syscall:writev", "syscall:write"]
[sweep]
arch = ["x86_64"]
"""


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for end in (source, sink):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class LateRelay:
    """Listens on localhost; relays each connection to `target` HELD_S after it came."""

    def __init__(self, target: str):
        host, port = target.removeprefix("tcp://").rsplit(":", 1)
        self.target = (host, int(port))
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=64)
        self.address = f"tcp://127.0.0.1:{self.listener.getsockname()[1]}"
        self.relayed = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        time.sleep(HELD_S)                   # the handshake's bytes wait, unread by the scheduler
        upstream = socket.create_connection(self.target)
        self.relayed += 1
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=_pipe, args=(a, b), daemon=True).start()

    def close(self) -> None:
        self.listener.close()


@pytest.mark.e2e
def test_a_scheduler_that_answers_late_is_reached(tmp_path):
    (tmp_path / "s.toml").write_text(SPEC)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None, timeout="300s") as cluster:
        relay = LateRelay(cluster.scheduler_address)
        try:
            result = CliRunner().invoke(main, ["experiment", "run", str(tmp_path / "s.toml"), "-o",
                                               str(tmp_path / "o"), "--scheduler", relay.address])
        finally:
            relay.close()
    assert result.exit_code == 0, result.output
    assert "1 points, complete" in result.output
    assert relay.relayed >= 1                 # the run went through the late relay
