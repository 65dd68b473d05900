"""File system notification descriptors: inotify (fs/notify/inotify/), over the file system's
event registry (kernel_model/fs/fsnotify.py)."""
