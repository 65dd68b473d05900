"""System V ids cycle through a window of indexes as Linux's do (ipc/util.c ipc_idr_alloc:
idr_alloc_cyclic below max(in_use * 3 / 2, ipc_min_cycle = 64), seq + 1 at each wrap): a queue
made and removed 70 times in a row gets indexes 0..63, then index 0 again with seq 1 (id
32768), where the sandbox went on to index 64; with 100 queues alive the window widens past 64,
and once they are gone the next index wraps to 0 again. Compared with the native run of the
same program in a new IPC namespace (unshare --ipc: a fresh table, the host's ids untouched).
Built by the host's gcc (static; -m32 for i386)."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#include <stdio.h>
#include <sys/ipc.h>
#include <sys/msg.h>

int main(void) {
    for (int i = 0; i < 70; i++) {                /* made and removed: one alive at a time */
        int q = msgget(IPC_PRIVATE, 0600);
        printf("%d%c", q, i % 10 == 9 ? '\n' : ' ');
        msgctl(q, IPC_RMID, NULL);
    }
    int queues[100];
    for (int i = 0; i < 100; i++) {               /* all alive: the window widens */
        queues[i] = msgget(IPC_PRIVATE, 0600);
        printf("%d%c", queues[i], i % 10 == 9 ? '\n' : ' ');
    }
    for (int i = 0; i < 100; i++)
        msgctl(queues[i], IPC_RMID, NULL);
    int last = msgget(IPC_PRIVATE, 0600);         /* none alive: back to a window of 64 */
    printf("after: %d\n", last);
    msgctl(last, IPC_RMID, NULL);
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "id_cycle", PROGRAM, arch=request.param)


def test_ids_cycle_as_natively(program):
    native = subprocess.run(["unshare", "--ipc", str(program)], capture_output=True, check=True,
                            timeout=60)
    first_run = native.stdout.split()[:70]
    assert first_run[63:66] == [b"63", b"32768", b"32769"], native.stdout
    assert b"after: " in native.stdout
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == native.stdout, result.describe()
