"""Landlock's uapi (include/uapi/linux/landlock.h) as the modeled kernel reports it.

The ABI version and errata are the host kernel's (6.18: landlock_create_ruleset(NULL, 0,
LANDLOCK_CREATE_RULESET_VERSION) is 7, ..._ERRATA is 7), so a program sees the same features
natively and in the sandbox.
"""
ABI_VERSION = 7
ERRATA = 7

CREATE_RULESET_VERSION = 1 << 0
CREATE_RULESET_ERRATA = 1 << 1

RULE_PATH_BENEATH = 1
RULE_NET_PORT = 2

# struct landlock_ruleset_attr: handled_access_fs, handled_access_net, scoped (u64 each);
# handled_access_fs alone is the smallest size accepted (copy_min_struct_from_user)
RULESET_ATTR_SIZE = 24
RULESET_ATTR_MIN_SIZE = 8
PATH_BENEATH_ATTR_SIZE = 12       # __packed: u64 allowed_access, s32 parent_fd
NET_PORT_ATTR_SIZE = 16           # u64 allowed_access, u64 port

ACCESS_FS_EXECUTE = 1 << 0
ACCESS_FS_WRITE_FILE = 1 << 1
ACCESS_FS_READ_FILE = 1 << 2
ACCESS_FS_READ_DIR = 1 << 3
ACCESS_FS_TRUNCATE = 1 << 14
MASK_ACCESS_FS = (1 << 16) - 1    # EXECUTE .. IOCTL_DEV (ABI 5)

ACCESS_NET_BIND_TCP = 1 << 0
ACCESS_NET_CONNECT_TCP = 1 << 1
MASK_ACCESS_NET = (1 << 2) - 1

SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0
SCOPE_SIGNAL = 1 << 1
MASK_SCOPE = (1 << 2) - 1

# landlock_restrict_self's flags (ABI 7): LOG_SAME_EXEC_OFF, LOG_NEW_EXEC_ON, LOG_SUBDOMAINS_OFF;
# logging is audit's business, which the sandbox has none of, so they are accepted and kept
RESTRICT_SELF_LOG_SUBDOMAINS_OFF = 1 << 2
MASK_RESTRICT_SELF = (1 << 3) - 1

MAX_NUM_LAYERS = 16               # security/landlock/limits.h LANDLOCK_MAX_NUM_LAYERS

# the file-system rights past the three a file's opening asks (ABI 1..3)
ACCESS_FS_REMOVE_DIR = 1 << 4
ACCESS_FS_REMOVE_FILE = 1 << 5
ACCESS_FS_MAKE_CHAR = 1 << 6
ACCESS_FS_MAKE_DIR = 1 << 7
ACCESS_FS_MAKE_REG = 1 << 8
ACCESS_FS_MAKE_SOCK = 1 << 9
ACCESS_FS_MAKE_FIFO = 1 << 10
ACCESS_FS_MAKE_BLOCK = 1 << 11
ACCESS_FS_MAKE_SYM = 1 << 12
ACCESS_FS_REFER = 1 << 13
