"""Landlock (security/landlock/): unprivileged sandboxing of a task by stacked rulesets.

  abi.py      the uapi constants (include/uapi/linux/landlock.h) and the ABI version reported
  ruleset.py  a ruleset being built (landlock_create_ruleset, landlock_add_rule) and its fd
  domain.py   the layers a task is restricted by (landlock_restrict_self), kept in its
              TaskFlags so fork and exec keep them, and the checks the hooks ask
  hooks.py    the questions open, bind/connect, unix connect and kill ask, as Linux's LSM
              hooks (fs.c hook_file_open, net.c hook_socket_bind/connect, task.c)
"""
