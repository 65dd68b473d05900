"""The sender's uid in a siginfo as the receiver's user namespace numbers it (signals/sender.py):
a kernel uid through from_kuid_munged, a sender's own siginfo through userns_fixup_signal_uid."""
import struct
from types import SimpleNamespace

from hypothesis import given, strategies as st

from kernel_model.signals.frame import pack_siginfo
from kernel_model.signals.sender import SI_UID_OFFSET, sent_by, uid_seen_by, user_siginfo_seen_by
from kernel_model.user_namespace import INITIAL, UserNamespace

SI_QUEUE, CLD_EXITED = -1, 1


def _namespace(first: int, lower: int, count: int) -> UserNamespace:
    ns = UserNamespace(1, INITIAL)
    ns.uid_map = ((first, lower, count),)
    return ns


def _task(ns: UserNamespace, uid: int = 0):
    return SimpleNamespace(pid=42, creds=SimpleNamespace(user_ns=ns, uid=uid))


def _si_uid(raw: bytes, word: int) -> int:
    return struct.unpack_from("<I", raw, SI_UID_OFFSET[word])[0]


def test_a_sender_names_its_tgid_and_real_uid():
    assert sent_by(_task(INITIAL, uid=65534), 0) == {"code": 0, "pid": 42, "uid": 65534}


def test_the_initial_namespace_sees_kernel_uids_and_another_its_map():
    ns = _namespace(5, 0, 1)                        # root is 5 there
    assert uid_seen_by(_task(INITIAL), 1234) == 1234
    assert uid_seen_by(_task(ns), 0) == 5
    assert uid_seen_by(_task(ns), 1234) == 65534    # unmapped: the overflow uid


def test_pack_siginfo_puts_the_uid_where_the_fixup_reads_it():
    for word in (4, 8):
        assert _si_uid(pack_siginfo(word, 10, 0, pid=1, uid=777), word) == 777


def _munged(ns: UserNamespace, kuid: int) -> int:
    (first, lower, count), = ns.uid_map
    return first + kuid - lower if lower <= kuid < lower + count else 65534


@given(word=st.sampled_from((4, 8)), code=st.integers(-6, 6), first=st.integers(0, 1 << 20),
       lower=st.integers(0, 1 << 20), count=st.integers(1, 1 << 20), mapped=st.booleans(),
       offset=st.integers(0, 1 << 21))
def test_a_user_siginfo_crosses_namespaces_as_its_kernel_uid(word, code, first, lower, count, mapped,
                                                            offset):
    """From a namespace to the initial one and back: a process-made siginfo (si_code <= 0) names
    the kernel uid its sender's namespace maps si_uid to (65534 unmapped); a kernel-made one
    (si_code > 0), and one within a namespace, are left as written. `mapped` draws si_uid inside
    the map (first + offset % count) or past it (first + count + offset), so both cases come."""
    ns = _namespace(first, lower, count)
    uid = first + offset % count if mapped else first + count + offset
    raw = pack_siginfo(word, 10, code, pid=1, uid=uid)
    to_initial = user_siginfo_seen_by(raw, word, _task(ns).creds, _task(INITIAL))
    assert user_siginfo_seen_by(raw, word, _task(ns).creds, _task(ns)) == raw
    if code > 0:
        assert to_initial == raw
        return
    kuid = lower + uid - first if mapped else 65534
    assert _si_uid(to_initial, word) == kuid
    at = SI_UID_OFFSET[word]
    assert to_initial[:at] == raw[:at] and to_initial[at + 4:] == raw[at + 4:]
    back = user_siginfo_seen_by(to_initial, word, _task(INITIAL).creds, _task(ns))
    assert _si_uid(back, word) == (uid if mapped else _munged(ns, 65534))
