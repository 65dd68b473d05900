"""strace -yy's descriptor details (strace 6.x: printfd_pid_with_finfo() in util.c, the
sock_diag answers in socketutils.c): what follows a descriptor's path in `3<...>`.

  * a device: its path, then `<char 1:3>` or `<block 8:0>` (st_rdev's major:minor);
  * a unix socket: `UNIX-STREAM:[INODE->PEER_INODE]`, with `,"PATH"` when it is bound (`@NAME`
    for an abstract name), `UNIX:[INODE]` for a datagram one with neither;
  * an inet socket: `TCP:[127.0.0.1:80->127.0.0.1:5555]`, `UDP:[0.0.0.0:53]` when it has no
    remote end, `TCP:[INODE]` when it is not bound yet (inet_diag has no entry for it);
    IPv6 hosts in brackets, `TCPv6:[[::1]:22]`.
The door tells what the descriptor is (kernel_model/debug/descriptors.py).
"""
import ipaddress

from .strings import escape_bytes


def device_suffix(device) -> str:
    return f"<{device.kind} {device.major}:{device.minor}>"


def socket_text(ends) -> str:
    if ends.protocol.startswith("UNIX"):
        return _unix_text(ends)
    if ends.local is None:
        return f"{ends.protocol}:[{ends.inode}]"
    text = _endpoint(*ends.local)
    if ends.remote is not None:
        text += "->" + _endpoint(*ends.remote)
    return f"{ends.protocol}:[{text}]"


def _unix_text(ends) -> str:
    text = f"{ends.protocol}:[{ends.inode}"
    if ends.peer_inode is not None:
        text += f"->{ends.peer_inode}"
    if ends.path is not None:
        path = b"@" + ends.path[1:] if ends.path[:1] == b"\0" else ends.path
        text += f',"{escape_bytes(path)}"'
    return text + "]"


def _endpoint(host: bytes, port: int) -> str:
    address = ipaddress.ip_address(host)
    if address.version == 6:
        return f"[{address}]:{port}"
    return f"{address}:{port}"
