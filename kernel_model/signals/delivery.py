"""Signal generation and delivery (Linux kernel/signal.c, arch/x86/kernel/signal.c).

Signals are posted as pending bits on a process (kill) or a thread (tgkill, faults). Before a
thread returns to user mode the kernel delivers the lowest-numbered deliverable one: ignored,
default action (terminate, core, stop, continue), or a handler — a frame on the user stack (or
the alternate stack for SA_ONSTACK), the handler's arguments in registers, the mask widened,
and the handler returns through sa_restorer into rt_sigreturn/sigreturn.

A thread sleeping in a blocking call is woken by a deliverable signal. Its call was rewound to
the syscall instruction (kernel_model/blocking.py); with SA_RESTART it runs again after the
handler, otherwise it returns -EINTR — as do pause, sigsuspend and the sleeps in any case.
"""
from typing import TYPE_CHECKING

from emu.fpu import read_fpu, reset_fpu, write_fpu

from .. import errno as E
from ..errno import GuestErrno
from ..blocking import CONDITION_MET, MADE_AGAIN, RESTART_BLOCK, RESTART_SYSCALL, SHOWN_RESTARTED
from ..process import job_control
from ..process.proc import RUNNABLE, SLEEPING, STOPPED
from ..memory.vm import PROT_WRITE
# Which sleeps a signal ends with EINTR, and which are made again: sleep_kinds.py
from .sleep_kinds import (EINTR_WITHOUT_HANDLER, ERESTART_RESTARTBLOCK, NEVER_RESTARTED,
                          RESTARTED_WITHOUT_HANDLER, sleeping_in)
from .numbers import (CORE_BY_DEFAULT, IGNORED_BY_DEFAULT, SIGCONT, SIGKILL, SIGRTMIN, SIGSEGV,
                      SIGSTOP, STOP_BY_DEFAULT)

if TYPE_CHECKING:
    from .frame import SavedRegisters

# The frame's layouts (frame.py, fpframe.py) are imported by the paths that build or read a
# frame: a run that handles no signal never needs them (issue 31, start-up).

SIG_DFL, SIG_IGN = 0, 1
SA_SIGINFO, SA_ONSTACK, SA_RESTART = 0x4, 0x08000000, 0x10000000
SA_RESTORER = 0x04000000
SA_NODEFER, SA_RESETHAND = 0x40000000, 0x80000000
SS_ONSTACK, SS_DISABLE = 1, 2
SI_USER, SI_KERNEL = 0, 0x80
# Instances of one real-time signal a process can have queued: the host's memory stays bounded
# (Linux bounds them by RLIMIT_SIGPENDING, a few thousand to tens of thousands by default);
# past it a further send is merged into the pending one, as a classic signal's is.
MAX_QUEUED_RT = 1 << 15
SIGWAIT_KEY = "sigwait_set"     # thread.restart: the set a sleeping rt_sigtimedwait waits for
INTERRUPT_KEY = "on_interrupt"   # thread.restart: what a sleep does when a signal ends it


def signalfd_channel(proc) -> tuple:
    """The wait channel of `proc`'s signalfds (signalfd.py): woken by every signal posted."""
    return ("signalfd", proc.pid)


def bit(sig: int) -> int:
    return 1 << (sig - 1)


UNBLOCKABLE = bit(SIGKILL) | bit(SIGSTOP)


def _collect(proc, sig: int, owner) -> tuple[dict, bool]:
    """kernel/signal.c collect_signal: the siginfo of `sig` taken off the thread's own queue
    (`owner`) or the process's (None), and whether another instance stays queued there (a
    real-time signal sent twice is delivered twice, each with its siginfo)."""
    queue = proc.rt_queue.get(sig) if sig >= SIGRTMIN else None
    if queue:
        for index, (target, info) in enumerate(queue):
            if target is owner:
                del queue[index]
                return info, any(target is owner for target, _ in queue)
    return proc.siginfo.pop(sig, {"code": SI_USER, "pid": 0}), False


class Signals:
    def __init__(self, kernel):
        self.kernel = kernel

    # ---- generation ------------------------------------------------------------------------
    def post(self, proc, sig: int, *, thread=None, info: dict | None = None) -> None:
        """Make `sig` pending for `proc` (or one of its threads) and wake whoever can take it."""
        if sig == 0 or proc.state == "zombie":
            return
        if sig == SIGCONT or sig == SIGKILL:
            was_stopped = any(t.state == STOPPED for t in proc.threads)
            for t in proc.threads:
                if t.state == STOPPED:
                    t.state = RUNNABLE
            if was_stopped and sig == SIGCONT:
                job_control.continued(self.kernel, proc)      # the parent's WCONTINUED
        if sig in STOP_BY_DEFAULT or sig == SIGCONT:
            proc.pending_signals &= ~(bit(SIGCONT) if sig != SIGCONT else
                                      sum(bit(s) for s in STOP_BY_DEFAULT))
        target = thread
        pending_set = proc if target is None else target
        if sig < SIGRTMIN and pending_set.pending_signals & bit(sig):
            return          # legacy_queue: a classic signal already pending is not sent again
        pending_set.pending_signals |= bit(sig)
        info = info or {"code": SI_USER, "pid": 0}
        if info.get("pid") and not proc.pid_ns.initial:
            # the sender as the receiver's pid namespace numbers it, 0 from outside
            # (kernel/signal.c send_signal_locked: task_tgid_nr_ns)
            info = {**info, "pid": proc.pid_ns.nr(info["pid"])}
        if "uid" in info and not proc.creds.user_ns.initial:
            from .sender import uid_seen_by     # only across user namespaces: not at start-up
            info = {**info, "uid": uid_seen_by(proc, info["uid"])}
        if sig >= SIGRTMIN:
            # a real-time signal is queued once per send, each with its siginfo, where a
            # classic one already pending is not sent again (kernel/signal.c legacy_queue)
            queue = proc.rt_queue.setdefault(sig, [])
            if len(queue) < MAX_QUEUED_RT:
                queue.append((target, info))
        else:
            proc.siginfo[sig] = info
        self.kernel.wakeup(signalfd_channel(proc))       # its signalfds' readers and pollers
        for t in ([target] if target is not None else proc.threads):
            # signal_wake_up wakes the sleeper as any wakeup does (try_to_wake_up): it
            # preempts its waker (process/sched.py)
            if t.state == SLEEPING and not (t.sigmask & bit(sig)) or sig == SIGKILL and t.state == SLEEPING:
                t.interrupted = True
                self.kernel.scheduler.wake(t)
            elif t.state == SLEEPING and t.restart.get(SIGWAIT_KEY, 0) & bit(sig):
                # rt_sigtimedwait waits for it (blocked meanwhile): it runs again and takes it
                self.kernel.scheduler.wake(t)

    def deliverable(self, thread) -> int:
        return ((thread.pending_signals | thread.process.pending_signals)
                & ~(thread.sigmask & ~UNBLOCKABLE) & ~thread.held_signals)

    def dequeue(self, thread, among: int) -> tuple[int, dict]:
        """Take the lowest pending signal of `among` off `thread` (its own pending set first,
        then its process's) with its siginfo: Linux's dequeue_signal (kernel/signal.c)."""
        proc = thread.process
        pending = (thread.pending_signals | proc.pending_signals) & among
        sig = (pending & -pending).bit_length()
        owner = thread if thread.pending_signals & bit(sig) else None
        info, more = _collect(proc, sig, owner)
        if not more:
            if owner is not None:
                thread.pending_signals &= ~bit(sig)
            else:
                proc.pending_signals &= ~bit(sig)
        if "dequeued" in info:
            info["dequeued"]()        # a POSIX timer's signal: its overrun count is final
        return sig, info

    # ---- delivery --------------------------------------------------------------------------
    def deliver(self, thread) -> None:
        """Deliver pending signals to `thread`, whose registers are live in its Machine."""
        proc = thread.process
        while thread.state == RUNNABLE and proc.state != "zombie":
            pending = self.deliverable(thread)
            if not pending:
                break
            sig, info = self.dequeue(thread, pending)
            if self.kernel.debug.trace_signal(thread, sig, info):
                continue                # the tracer's now (US 7,185,320 [0036]): resume decides
            self._act(thread, sig, info)
        thread.interrupted = False

    def _act(self, thread, sig: int, info: dict) -> None:
        proc = thread.process
        handler, flags, restorer, mask = proc.sigactions.get(sig, (SIG_DFL, 0, 0, 0))
        if sig in (SIGKILL, SIGSTOP):
            handler = SIG_DFL
        if handler == SIG_IGN or (handler == SIG_DFL and sig in IGNORED_BY_DEFAULT):
            self._finish_interrupted_call(thread, restart=True, handled=False)
            # Linux does not even queue it for an untraced process (sig_ignored), but a
            # tracer sees it (strace's "--- SIGCHLD ... ---"): the tools hear of it.
            self.kernel.debug.signal_ignored(proc, thread, sig, info)
            return
        if handler == SIG_DFL:
            if sig in STOP_BY_DEFAULT:
                from .group_stop import stop_process     # a run that stops nothing never needs it
                stop_process(self, thread, sig, info)
                return
            core = sig in CORE_BY_DEFAULT
            if self.kernel.debug.trace_death(thread, sig, sig | (0x80 if core else 0)):
                return                  # its tracer's exit stop first; resumed, it dies
            self.kernel.kill(proc, sig, "", core=core, info=info)
            return
        self._finish_interrupted_call(thread, restart=bool(flags & SA_RESTART))
        if not self._setup_frame(thread, sig, handler, flags, restorer, mask, info):
            return
        if flags & SA_RESETHAND:
            # only the handler goes back to SIG_DFL (get_signal: ka->sa.sa_handler = SIG_DFL);
            # the flags stay, SA_SIGINFO included (LTP sigaction01)
            proc.sigactions[sig] = (SIG_DFL, flags, restorer, mask)
        self.kernel.debug.signal(proc, thread, sig, info)

    def _finish_interrupted_call(self, thread, *, restart: bool, handled: bool = True) -> None:
        """A call that slept and was rewound: re-run it (restart) or make it return -EINTR.
        A handled signal ends it for the tools (their `= ? ERESTARTSYS`); an ignored one runs
        it again, but for a ptraced thread's EINTR calls: Linux queues even an ignored signal
        for a ptraced task, which wakes it, and they return -EINTR (signals/traced_calls.py;
        thread.ptrace: kernel_model/ptraced.py)."""
        call, kind = thread.blocked_call, sleeping_in(thread)
        if call is None:
            return
        if not handled and not (kind in EINTR_WITHOUT_HANDLER and thread.ptrace):
            # An ignored signal: Linux does not even queue it (sig_ignored), so the sleeper
            # never woke. Its call runs again as it was: a sleep keeps its deadline, pause and
            # rt_sigtimedwait go on waiting (LTP rt_sigtimedwait01: an ignored SIGUSR2 every
            # 100 ms must not make a 1 s wait return EINTR, nor restart its timeout). The call
            # stays the interrupted one: a handled signal dequeued after it in the same
            # delivery still ends it (get_signal skips the ignored one and the handler's
            # signal meets the call's -ERESTART_RESTARTBLOCK: EINTR; LTP kill12's child, sent
            # SIGHUP, ignored, then SIGCHLD, slept its whole second again after the handler).
            self._report_made_again(thread, call)
            return
        thread.blocked_call = None
        # A sleeper whose condition came true before the signal (restart["condition_met"],
        # set by the waker) completes its call: Linux's wait_event_interruptible checks the
        # condition before signal_pending (include/linux/wait.h, ___wait_event).
        # Its restart state stays: it is what tells the re-executed call that it was woken
        # (a futex waiter's "futex_woken": its word may still hold the value it waits on,
        # so without it the call would sleep again, and a FUTEX_WAKE followed at once by the
        # waker's exit — an ignored SIGCHLD — was lost).
        if thread.restart.get("condition_met", False):
            return
        on_interrupt = thread.restart.get(INTERRUPT_KEY)
        reported = thread.restart.get(MADE_AGAIN, False)
        shown = RESTART_SYSCALL if thread.restart.get(SHOWN_RESTARTED) else call
        code = _code_shown(thread, kind)
        thread.restart.clear()
        if not reported:
            self.kernel.debug.syscall_interrupted(thread, shown, code)
        if restart and kind not in NEVER_RESTARTED:
            return
        # (a sleep writes the time it had left; EFAULT when it cannot: do_nanosleep)
        errno = (on_interrupt() if on_interrupt is not None else None) or E.EINTR
        machine = thread.process.machine
        machine.set_reg("eax" if machine.arch.bits == 32 else "rax", -errno & machine.arch.mask)
        machine.pc = machine.pc + 2                      # past int 0x80 / syscall

    def _report_made_again(self, thread, call: str) -> None:
        """What a tracer sees of a restartable call an ignored signal woke: under ptrace Linux
        queues the signal all the same (kernel/signal.c sig_ignored: a traced task's are
        not ignored at sending), so the call ends with -ERESTARTSYS, the signal is reported
        and ignored, and the call is made again (strace: `= ? ERESTARTSYS`, `--- SIG... ---`,
        then the call anew). The sandbox's call runs again in any case: the tools see it so,
        once; a relative sleep and poll with a timeout are made again as restart_syscall
        (-ERESTART_RESTARTBLOCK). The calls Linux would fail with EINTR instead keep sleeping
        (untraced, Linux does not queue the signal; ptraced: traced_calls.py)."""
        kind = sleeping_in(thread)
        if (kind in NEVER_RESTARTED and kind not in RESTARTED_WITHOUT_HANDLER) or \
                MADE_AGAIN in thread.restart or thread.restart.get(CONDITION_MET, False):
            return
        thread.restart[MADE_AGAIN] = RESTART_SYSCALL if thread.restart.get(RESTART_BLOCK) else True
        on_interrupt = thread.restart.get(INTERRUPT_KEY)
        if thread.restart.get(RESTART_BLOCK) and on_interrupt is not None:
            on_interrupt()      # the time left, written before the restart (do_nanosleep)
        shown = RESTART_SYSCALL if thread.restart.get(SHOWN_RESTARTED) else call
        self.kernel.debug.syscall_interrupted(thread, shown, _code_shown(thread, kind))

    def _setup_frame(self, thread, sig, handler, flags, restorer, mask, info) -> bool:
        """Whether the handler's frame was built and the thread now runs the handler."""
        from .fpframe import fpstate_pieces, math_frame
        from .frame import (RT32_SIZE, RT64_SIZE, SF32_SIZE, build_frame32, build_rt_frame32, build_rt_frame64,
                            siginfo_of)
        debug = self.kernel.debug
        debug.restart_sequence(thread)                   # rseq: the frame returns to its start
        machine = thread.process.machine
        interrupted = machine.pc
        # A PC in a tool's copy of the program's code is saved as the original address it
        # stands for (kernel_model/debug/signal_pcs.py; asynchronous signals may step first).
        shown = debug.signal_frame_pc(thread, synchronous="addr" in info)
        if thread.state != RUNNABLE:
            return False
        bits = machine.arch.bits
        # sigsuspend/ppoll/pselect run with a temporary mask: the frame keeps the caller's own.
        frame_mask = thread.saved_sigmask if thread.saved_sigmask is not None else thread.sigmask
        regs = self._capture(machine, frame_mask)
        if shown is not None:
            if info.get("addr") == interrupted:          # si_addr of SIGILL/SIGFPE/SIGTRAP
                info = dict(info, addr=shown)
            regs.pc = shown
        sp = regs.gpr["rsp" if bits == 64 else "esp"]
        ss_sp, ss_flags, ss_size = thread.sigaltstack
        on_alt = ss_sp <= sp < ss_sp + ss_size
        stack = (ss_sp, (SS_ONSTACK if on_alt else 0) if not ss_flags & SS_DISABLE else SS_DISABLE, ss_size)
        if flags & SA_ONSTACK and not ss_flags & SS_DISABLE and not on_alt:
            sp = ss_sp + ss_size
        word = 8 if bits == 64 else 4
        siginfo = siginfo_of(word, sig, info)
        if bits == 64:
            sp -= 128                                     # the psABI red zone
        # get_sigframe: the FPU state right below, then the frame (fpu__alloc_mathframe).
        regs.fpstate, buf_fx = math_frame(sp, ia32=bits == 32)
        sp = regs.fpstate
        if bits == 32:
            restorer = _restorer32(thread.process.space, flags, restorer)
        if bits == 64:
            frame = ((sp - RT64_SIZE) & ~0xF) - 8         # (rsp + 8) % 16 == 0 at entry
            pieces = [(0, build_rt_frame64(regs, siginfo, restorer, stack))]
            args = {"rdi": sig, "rsi": frame + 8 + 304, "rdx": frame + 8, "rax": 0}
        elif flags & SA_SIGINFO:
            frame = ((sp - RT32_SIZE + 4) & ~0xF) - 4
            pieces = [(0, build_rt_frame32(frame, sig, regs, siginfo, restorer, stack))]
            args = {"eax": sig, "edx": frame + 16, "ecx": frame + 16 + 128}
        else:
            frame = ((sp - SF32_SIZE + 4) & ~0xF) - 4
            pieces = build_frame32(frame, sig, regs, restorer)
            args = {"eax": sig, "edx": 0, "ecx": 0}
        writes = [(frame + offset, data) for offset, data in pieces]
        writes += fpstate_pieces(read_fpu(machine), regs.fpstate, buf_fx, bits)
        if not all(self._writable(thread, addr, len(data)) for addr, data in writes):
            self._force_sigsegv(thread, sig)
            return False
        thread.saved_sigmask = None
        for addr, data in writes:
            machine.mem.write(addr, data)
        thread.saved_contexts = [c for c in thread.saved_contexts if c[0] > frame]
        # The interrupted code's segment state stays with the kernel (Unicorn's context save
        # copies the whole CPU state); its x87/SSE state is in the frame, where the handler
        # may read or change it, and sigreturn loads it from there.
        thread.saved_contexts.append((frame, machine.save_context()))
        if shown is not None:
            debug.signal_frame_built(thread, frame, thread.saved_contexts[-1][1])
        reset_fpu(machine)          # the handler starts clean: fpu__clear_user_states (signal.c)
        machine.set_regs(args)
        machine.sp = frame
        machine.pc = handler
        machine.set_reg("eflags" if bits == 32 else "rflags", regs.flags & ~0x40100)   # clear TF, DF
        thread.sigmask = frame_mask | mask | (0 if flags & SA_NODEFER else bit(sig))
        thread.sigmask &= ~UNBLOCKABLE
        return True

    def _force_sigsegv(self, thread, sig: int) -> None:
        """A frame that cannot be written (kernel/signal.c force_sigsegv, from
        signal_setup_done): the handler does not run and the thread gets a SIGSEGV, whose own
        handler may still run elsewhere (the thread's stack); a blocked or ignored SIGSEGV is
        unblocked with its action reset to the default (force_sig_info_to_task), and when the
        failed frame was SIGSEGV's own the process dies of it (force_fatal_sig)."""
        proc = thread.process
        if sig == SIGSEGV:
            self.kernel.kill(proc, SIGSEGV, "cannot build the frame for signal SIGSEGV")
            return
        action = proc.sigactions.get(SIGSEGV, (SIG_DFL, 0, 0, 0))
        if action[0] == SIG_IGN or thread.sigmask & bit(SIGSEGV):
            proc.sigactions[SIGSEGV] = (SIG_DFL, *action[1:])
            thread.sigmask &= ~bit(SIGSEGV)
        self.post(proc, SIGSEGV, thread=thread, info={"code": SI_KERNEL, "pid": 0})

    @staticmethod
    def _writable(thread, addr: int, size: int) -> bool:
        return thread.process.vm.allows(addr, size, PROT_WRITE)

    @staticmethod
    def _capture(machine, mask: int) -> "SavedRegisters":
        from .frame import SavedRegisters
        regs = machine.registers()
        segs = dict(regs.selectors)
        return SavedRegisters(gpr=dict(regs.gpr), pc=regs.pc, flags=regs.flags, segs=segs, mask=mask)

    # ---- return from a handler -------------------------------------------------------------
    def sigreturn(self, ctx, rt: bool) -> None:
        """rt_sigreturn/sigreturn: registers and mask from the frame the handler returns over."""
        from .frame import RT32_SIZE, RT64_SIZE, SF32_SIZE, parse_frame32, parse_rt_frame32, parse_rt_frame64
        thread, machine = ctx.thread, ctx.proc.machine
        sp = machine.sp
        try:
            if machine.arch.bits == 64:
                frame = sp - 8                      # the handler's `ret` popped pretcode
                saved = parse_rt_frame64(ctx.read(frame, RT64_SIZE))
            elif rt:
                frame = sp - 4
                saved = parse_rt_frame32(ctx.read(frame, RT32_SIZE))
            else:
                frame = sp - 8                      # pretcode and sig were popped
                saved = parse_frame32(ctx.read(frame, SF32_SIZE))
        except GuestErrno:                          # the frame is not readable: EFAULT
            self.kernel.kill(ctx.proc, 11, "bad signal frame at sigreturn")
            return
        contexts = thread.saved_contexts
        match = [c for c in contexts if c[0] == frame]
        if match:
            machine.restore_context(match[-1][1])   # segment state of the interrupted code
            thread.saved_contexts = [c for c in contexts if c[0] > frame]
        sp_name = "esp" if machine.arch.bits == 32 else "rsp"
        machine.set_regs({name: value for name, value in saved.gpr.items() if name != sp_name})
        # Only the arithmetic/control flags the user may change (Linux FIX_EFLAGS).
        fix = 0x40DD5
        flags_name = "eflags" if machine.arch.bits == 32 else "rflags"
        flags = (machine.reg(flags_name) & ~fix) | (saved.flags & fix)
        pc = self.kernel.debug.signal_return_pc(thread, frame, saved.pc)   # debug/signal_pcs.py
        ctx.set_user_state(pc=pc, sp=saved.gpr[sp_name], flags=flags)
        thread.sigmask = saved.mask & ~UNBLOCKABLE
        self._restore_fpu(ctx, saved.fpstate, ia32=machine.arch.bits == 32)

    def _restore_fpu(self, ctx, fpstate: int, *, ia32: bool) -> None:
        """fpu__restore_sig, last in restore_sigcontext as in Linux: a state Linux refuses
        leaves the FPU clean and makes the frame bad (signal_fault: SIGSEGV)."""
        from .fpframe import RestoreError, restore_fpstate
        machine = ctx.proc.machine
        try:
            state = restore_fpstate(ctx.read, fpstate, machine.arch.bits, ia32)
        except (RestoreError, GuestErrno) as e:
            reset_fpu(machine)
            self.kernel.kill(ctx.proc, 11, f"bad signal frame at sigreturn: FPU state at {fpstate:#x}: "
                                           f"{e if isinstance(e, RestoreError) else 'not readable'}")
            return
        write_fpu(machine, state)


def _code_shown(thread, kind: str) -> int | None:
    """The code the tools see an interrupted call return when its name does not say it
    (strace's table does): EINTR for a socket's timed wait, ERESTART_RESTARTBLOCK for a
    futex's."""
    if kind in EINTR_WITHOUT_HANDLER:
        return E.EINTR
    return ERESTART_RESTARTBLOCK if thread.restart.get(RESTART_BLOCK) else None


def _restorer32(space, flags: int, restorer: int) -> int:
    """Where an i386 handler returns (arch/x86/kernel/signal_32.c ia32_setup_frame and
    ia32_setup_rt_frame): sa_restorer with SA_RESTORER, else the vDSO's __kernel_sigreturn or
    __kernel_rt_sigreturn, else (no vDSO) 0: the frame's own retcode."""
    if flags & SA_RESTORER:
        return restorer
    vdso = getattr(space, "vdso", None)
    if vdso is None:
        return 0
    return vdso.address("__kernel_rt_sigreturn" if flags & SA_SIGINFO else "__kernel_sigreturn")
