"""The sender's uid in a signal's siginfo, as Linux fills it (kernel/signal.c): the sandbox's
siginfos all said si_uid=0. siginfo_uid.c, run as root natively and in the sandbox on both arches,
byte-identical: SIGCHLD (exit, stop, continue) with the child's real uid (do_notify_parent,
do_notify_parent_cldstop), waitid's the same; kill, tgkill, tkill, sigqueue and pidfd_send_signal
with the sender's real uid (prepare_kill_siginfo) and the forged si_codes refused (EPERM); the
parent-death signal with the dying parent's, SIGPIPE and SIGXFSZ with the writer's own
(send_sig(sig, current, 0): SEND_SIG_NOINFO); a SA_SIGINFO handler's and a signalfd's; mq_notify
with the sender's; and across a user namespace where root is 5: root's kill and sigqueue show 5,
an unmapped sender 65534, the namespace's own sends 0 to root, and its sigqueue's si_uid 77
(unmapped) 65534 (userns_fixup_signal_uid)."""
from pathlib import Path

import pytest

from tests.e2e.static_c import build_static, compare_with_native

pytestmark = pytest.mark.e2e

SOURCE = Path(__file__).with_name("siginfo_uid.c").read_text()
GCC_ARCH = {"amd64": "x86_64", "i386": "i386"}
# the cases the native run must reach (each would read uid=0 before)
SHOWN = (b"sigchld exit as nobody     signo=17 code=1 pid=child uid=65534 status=3",
         b"sigchld stopped            signo=17 code=5 pid=child uid=1234",
         b"tgkill from uid 65534      signo=12 code=0 pid=child uid=65534",
         b"forged SI_TKILL            -1 EPERM",
         b"pidfd_send_signal from 4321 signo=10 code=0 pid=child uid=4321",
         b"pdeath from 777            signo=12 code=0 uid=777",
         b"sigxfsz as 555             signo=25 code=0 pid=self uid=555",
         b"handler raise as 555       signo=12 code=-6 pid=self uid=555",
         b"mq_notify sent by 999      signo=1 code=-3 pid=child uid=999",
         b"waitid of 2222             signo=17 code=1 pid=child uid=2222 status=5",
         b"signalfd from 3333         signo=10 code=0 pid=child uid=3333",
         b"ns: kill from root         signo=10 code=0 pid=self uid=5",
         b"ns: kill from 1234         signo=12 code=0 pid=other uid=65534",
         b"queued uid 77 from ns      signo=34 code=-1 pid=child uid=65534")


@pytest.mark.parametrize("arch", ("amd64", "i386"))
def test_siginfo_uid_as_natively(arch, tmp_path_factory):
    program = build_static(tmp_path_factory, f"siginfo_uid_{arch}", SOURCE, arch=GCC_ARCH[arch])
    compare_with_native(program, *SHOWN)
