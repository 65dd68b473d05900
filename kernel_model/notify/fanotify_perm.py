"""fanotify's permission events (fs/notify/fanotify/fanotify.c fanotify_get_response,
fsnotify_perm): a task opening or reading a file a permission mark covers waits until every
group that asked answers, then goes on (FAN_ALLOW) or fails with EPERM (FAN_DENY).

The task's wait is the model's sleep, and its call is retried from scratch when woken: the
event is the same one across retries, found again by (task, inode, event), and its
answer is taken only once every group has given one, so a group that answered first is not
asked again while another still thinks. A group closing answers FAN_ALLOW for all its events
(fanotify_release). FAN_OPEN_EXEC_PERM marks are accepted, but exec opens raise no event.
"""
from .. import errno as E
from ..blocking import WouldBlock
from ..errno import GuestErrno
from ..fs.fsnotify import FAN_ACCESS_PERM, FAN_OPEN_PERM, inode_key

FAN_OPEN_EXEC_PERM = 0x40000
PERM_EVENTS = FAN_OPEN_PERM | FAN_ACCESS_PERM | FAN_OPEN_EXEC_PERM
FAN_ALLOW, FAN_DENY = 0x01, 0x02


class PermEvent:
    """One task's wait for one group's answer (struct fanotify_perm_event)."""

    def __init__(self, wakeup):
        self._wakeup = wakeup
        self.response = 0

    @property
    def channel(self) -> tuple:
        return ("fanotify permission", id(self))

    def answer(self, response: int) -> None:
        if not self.response:
            self.response = response
            self._wakeup(self.channel)


class PermissionWaits:
    """The permission events tasks wait on, by (tid, inode, event, group): an open retried
    is a new description of the same inode."""

    def __init__(self, wakeup):
        self._wakeup = wakeup
        self._waits: dict[tuple, tuple[PermEvent, object]] = {}

    def check(self, tid: int, file, event: int, groups: list) -> None:
        """Ask each group (with the mask it wants) about `file`: sleep while any has not
        answered; EPERM if any denied; else go on."""
        pending, denied, keys = None, False, []
        for group, mask in groups:
            key = (tid, inode_key(file.node), event, id(group))
            keys.append(key)
            found = self._waits.get(key)
            if found is None:
                perm = PermEvent(self._wakeup)
                self._waits[key] = (perm, group)
                group.queue_event(mask, file, perm)
            else:
                perm = found[0]
            if not perm.response:
                pending = perm
            denied = denied or perm.response == FAN_DENY
        if pending is not None:
            raise WouldBlock(pending.channel, "fanotify permission event")
        for key in keys:
            del self._waits[key]
        if denied:
            raise GuestErrno(E.EPERM)
