"""Kernel keys (security/keys/): keyrings and keys a process adds, finds and manages with
add_key, request_key and keyctl (syscalls/impls/keys.py)."""
