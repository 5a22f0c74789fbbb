"""One build at a time per checkout: a lock that waits and says for whom.

Every process that writes the checkout's generated files (``docs/auto_examples/``,
``_build/``) holds it: ``make html``, ``pdf`` and ``epub`` for their whole run,
every Sphinx process while it runs (this module is also a Sphinx extension),
``make test`` for its session, and ``make clean`` (flock(1) on the same file).
The lock is ``flock`` on ``.build.lock`` at the checkout's top, which no command
deletes: the system releases it when its holder exits or is killed. The holder
writes its name into the file; a holder's child processes inherit the lock
through ``DP_BUILD_LOCK``.
"""

import contextlib
import os
import sys
import time
from pathlib import Path

from filelock import FileLock, Timeout

INHERITED = "DP_BUILD_LOCK"
_held = {}  # checkout folder -> its FileLock, while this process holds it


def lock_file(root):
    """The file whose ``flock`` is *root*'s lock."""
    return Path(root, ".build.lock")


def outside_env(**extra):
    """This process's environment, *extra* added, for a command on another checkout:
    without the lock it holds, its holder's name and its ``conf/`` on the import path."""
    drop = (INHERITED, "DP_COMMAND", "PYTHONPATH")
    return {**{k: v for k, v in os.environ.items() if k not in drop}, **extra}


def acquire(root, what, out=sys.stderr):
    """Take *root*'s lock for this process, waiting (and saying so) while another holds it.

    Return False if this process or an ancestor already holds it, else True.
    """
    root = str(Path(root).resolve())
    if os.environ.get(INHERITED) == root or root in _held:
        return False
    since = time.strftime("%H:%M:%S")
    name = f"`{what}` (pid {os.getpid()}, since {since})\n".encode()
    lock = FileLock(lock_file(root), on_acquired=lambda fd: (os.ftruncate(fd, 0), os.pwrite(fd, name, 0)))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        holder = lock_file(root).read_text("utf-8", errors="replace").strip() or "another build"
        out.write(
            f"waiting: {holder} is using this checkout's generated files (docs/auto_examples, _build);"
            f" `{what}` starts when it is done (Ctrl-C to give up)\n"
        )
        out.flush()
        lock.acquire()
    _held[root] = lock
    os.environ[INHERITED] = root  # the processes this one starts hold it too
    return True


def release(root):
    """Give back *root*'s lock if this process took it."""
    root = str(Path(root).resolve())
    lock = _held.pop(root, None)
    if lock is not None:
        if os.environ.get(INHERITED) == root:
            del os.environ[INHERITED]
        lock.release()


@contextlib.contextmanager
def held(root, what):
    """Hold *root*'s lock for the ``with`` block (a no-op if it is held already)."""
    took = acquire(root, what)
    try:
        yield
    finally:
        if took:
            release(root)


def setup(app):
    """Take the lock before anything is generated; give it back when the build ends."""
    root = Path(app.confdir).parent
    # Only if this build took it: a process forked from its holder shares the holder's lock.
    if acquire(root, os.environ.get("DP_COMMAND") or "sphinx-build " + " ".join(sys.argv[1:3])):
        app.connect("build-finished", lambda app, exception: release(root), priority=1000)
    return {"version": "2", "parallel_read_safe": True, "parallel_write_safe": True}
