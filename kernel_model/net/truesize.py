"""How much of its sender's SO_SNDBUF one piece of a unix stream send costs (its sk_buff's
truesize), as Linux 6.x's unix_stream_sendmsg (net/unix/af_unix.c) cuts and allocates it.

A send is cut into sk_buffs of at most half the send buffer less 64 bytes, and at most
SKB_MAX_HEAD(0) + UNIX_SKB_FRAGS_SZ bytes; of each, the bytes beyond SKB_MAX_HEAD(0) (rounded up
to pages) go to page fragments and the rest to the kmalloc'd head (sock_alloc_send_pskb). The
truesize is the head's kmalloc size (with struct skb_shared_info) plus struct sk_buff plus the
pages. Measured on the reference host with SIOCOUTQ (sk_wmem_alloc) after one send on a
socketpair: 1 to 128 bytes cost 768, 200 1280, 1000 2304, 3776 4352, 3777 and 4096 4864, 8192
8960, 65536 67072 (two sk_buffs), 200000 204288 (six).
"""
PAGE = 4096
SHINFO = 320                    # SKB_DATA_ALIGN(sizeof(struct skb_shared_info))
SKB_STRUCT = 256                # SKB_DATA_ALIGN(sizeof(struct sk_buff))
SKB_MAX_HEAD = PAGE - SHINFO    # SKB_MAX_HEAD(0): the payload a one-page head holds
UNIX_SKB_FRAGS_SZ = 32768       # PAGE_SIZE << get_order(32768)
CACHE_LINE = 64                 # SMP_CACHE_BYTES, SKB_DATA_ALIGN's unit


def _kmalloc_size(size: int) -> int:
    """The kmalloc cache a head of `size` bytes comes from (powers of two from 512 up to a
    page here: a head is at least 64 + 320 bytes and at most a page)."""
    cache = 512
    while cache < size:
        cache <<= 1
    return cache


def stream_skb(length: int, sndbuf: int) -> tuple[int, int]:
    """(the payload of the next sk_buff of a stream send of `length` more bytes, its truesize)."""
    size = min(length, (sndbuf >> 1) - 64, SKB_MAX_HEAD + UNIX_SKB_FRAGS_SZ)
    paged = min(size, -(-max(0, size - SKB_MAX_HEAD) // PAGE) * PAGE)
    head = size - paged
    aligned = -(-head // CACHE_LINE) * CACHE_LINE
    return size, _kmalloc_size(aligned + SHINFO) + SKB_STRUCT + -(-paged // PAGE) * PAGE
