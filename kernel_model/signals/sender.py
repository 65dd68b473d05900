"""Who sent a signal, as its siginfo names them (si_pid, si_uid; Linux kernel/signal.c).

A process that sends a signal (kill, tkill, tgkill, pidfd_send_signal: prepare_kill_siginfo;
send_sig(sig, current, 0) for SIGPIPE and SIGXFSZ, and a parent-death signal: SEND_SIG_NOINFO
in __send_signal_locked) puts its tgid and its real uid in the siginfo; the parent's SIGCHLD
names the child and the child's real uid (do_notify_parent, do_notify_parent_cldstop:
task_uid(tsk)). The model keeps the kernel's numbers here (the global pid, the kuid) and
Signals.post shows them in the receiver's namespaces (task_tgid_nr_ns; from_kuid_munged over
the receiver's user namespace, 65534 for a uid it does not map).

A siginfo the sender wrote itself (rt_sigqueueinfo, rt_tgsigqueueinfo, pidfd_send_signal with
one) carries the uid as the sender's user namespace numbers it: when the receiver lives in
another one and the si_code says a process sent it (si_code <= 0, SI_FROMUSER), Linux
translates it (userns_fixup_signal_uid). Kernel-made signals (faults, SIGIO, timers) carry no
uid: their dicts have no "uid".
"""
import struct

from ..user_namespace import make_kid, munged

OVERFLOW_UID = 65534
SI_UID_OFFSET = {4: 16, 8: 20}       # si_signo, si_errno, si_code (+4 padding on x86-64), si_pid


def sent_by(proc, code: int) -> dict:
    """The siginfo fields of a signal `proc` sends itself (its tgid and real kuid)."""
    return {"code": code, "pid": proc.pid, "uid": proc.creds.uid}


def status_for_sigchld(child) -> dict:
    """do_notify_parent's siginfo: the child, its real uid (task_uid), how it ended
    (CLD_EXITED and its code, CLD_KILLED or CLD_DUMPED and the signal)."""
    status = child.exit_status or 0
    if status & 0x7F:
        return {"code": 2 if not status & 0x80 else 3, "pid": child.pid, "uid": child.creds.uid,
                "status": status & 0x7F}
    return {"code": 1, "pid": child.pid, "uid": child.creds.uid, "status": (status >> 8) & 0xFF}


def uid_seen_by(receiver, kuid: int) -> int:
    """from_kuid_munged(task_cred_xxx(receiver, user_ns), kuid)."""
    ns = receiver.creds.user_ns
    return kuid if ns.initial else munged(ns, kuid)


def user_siginfo_seen_by(raw: bytes, word: int, sender_creds, receiver) -> bytes:
    """userns_fixup_signal_uid: a process-made siginfo's si_uid, written in the sender's user
    namespace, as the receiver's namespace numbers it (65534 when either does not map it)."""
    sender_ns, receiver_ns = sender_creds.user_ns, receiver.creds.user_ns
    code = struct.unpack_from("<i", raw, 8)[0]
    if sender_ns is receiver_ns or code > 0:
        return raw
    offset = SI_UID_OFFSET[word]
    kuid = make_kid(sender_ns, struct.unpack_from("<I", raw, offset)[0])
    seen = OVERFLOW_UID if kuid is None else munged(receiver_ns, kuid)
    return raw[:offset] + struct.pack("<I", seen) + raw[offset + 4:]
