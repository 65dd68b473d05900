"""What prctl(2) sets on a task and what fork and exec do with it (kernel/sys.c, kernel/fork.c).

- pdeath_signal: sent to the task when its parent dies (kernel/exit.c forget_original_parent);
  a forked child starts without one (copy_process clears it).
- dumpable: SUID_DUMP_USER (1) or SUID_DUMP_DISABLE (0); exec makes the task dumpable again.
- timer_slack_ns / default_timer_slack_ns: a child's current and default slack are both the
  parent's current one (copy_process); PR_SET_TIMERSLACK 0 goes back to the default. 50 µs
  at boot (init_task's).
- no_new_privs: kept by fork and exec, never cleared.
- tsc_sigsegv: PR_TSC_SIGSEGV, RDTSC raises SIGSEGV (TIF_NOTSC: kept by fork and exec).
- seccomp_mode, seccomp_filters: strict or filter mode and the filters, newest first
  (kernel_model/seccomp/); fork copies them (copy_seccomp), exec keeps them.
- keep_caps, securebits, thp_disable: stored and read back; capbset and ambient stand for the
  credentials' bounding and ambient sets (creds.py has neither): fork keeps them.
- landlock: the task's Landlock domain (kernel_model/landlock/domain.py), None when no ruleset
  restricts it; it lives in Linux's credentials, which fork shares and exec keeps.
"""
from dataclasses import dataclass, replace

DEFAULT_TIMER_SLACK_NS = 50_000


@dataclass(frozen=True)
class TaskFlags:
    """What prctl(2) set on one task (module docstring: what fork and exec keep)."""
    pdeath_signal: int = 0
    dumpable: int = 1
    timer_slack_ns: int = DEFAULT_TIMER_SLACK_NS
    default_timer_slack_ns: int = DEFAULT_TIMER_SLACK_NS
    no_new_privs: bool = False
    tsc_sigsegv: bool = False
    keep_caps: bool = False
    securebits: int = 0
    capbset: int = (1 << 41) - 1           # every capability up to CAP_LAST_CAP (40)
    ambient: int = 0
    thp_disable: bool = False
    seccomp_mode: int = 0                  # SECCOMP_MODE_DISABLED
    seccomp_filters: tuple = ()
    landlock: object = None

    def for_child(self) -> "TaskFlags":
        return replace(self, pdeath_signal=0, default_timer_slack_ns=self.timer_slack_ns)

    def after_exec(self) -> "TaskFlags":
        return replace(self, dumpable=1)
