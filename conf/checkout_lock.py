"""One build at a time per checkout: a lock that waits and says what it waits for.

Every process that writes the checkout's generated files (the executed
gallery in ``docs/auto_examples/``, ``_build/``) holds this lock: the site
build (``build_site.py``) for its whole run, every other Sphinx process
(``make gettext``, ``make check``, each live-preview rebuild) while it runs,
``make test`` for the whole session and ``make clean``. A second one waits,
saying for whom, and starts when the first is done; it never writes beside it.

The lock is ``flock`` on the checkout's top folder, which no command deletes,
so the operating system releases it when its holder exits or is killed: a
crashed build never leaves a stale lock. Who holds it is written, for the
message only, to ``_build/build-lock-holder``. A holder's child processes
inherit the lock through ``DP_BUILD_LOCK`` and do not wait for their parent.

Usage (from the Makefile): ``python3 conf/checkout_lock.py WHAT -- COMMAND...``
runs COMMAND under the lock and exits with its code. Standard library only,
so that it runs before the virtual environment exists.
"""

import contextlib
import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INHERITED = "DP_BUILD_LOCK"
_held = {}  # checkout folder -> open descriptor, for this process


def outside_env(**extra):
    """This process's environment, *extra* added, without the lock it holds and its name.

    For a command on another checkout (a copy, a clone): it takes that
    checkout's own lock, as a command typed by hand would.
    """
    env = {k: v for k, v in os.environ.items() if k not in (INHERITED, "DP_COMMAND")}
    return {**env, **extra}


def _holder_file(root):
    return Path(root, "_build", "build-lock-holder")


def describe_holder(root):
    """Return who holds *root*'s lock, as written by the holder, or a placeholder."""
    try:
        return _holder_file(root).read_text("utf-8").strip() or "another build"
    except OSError:
        return "another build"


def acquire(root, what, out=sys.stderr):
    """Take *root*'s lock for this process, waiting (and saying so) while another holds it.

    Return False if an ancestor process already holds it for us, else True.
    """
    root = str(Path(root).resolve())
    if os.environ.get(INHERITED) == root or root in _held:
        return False
    fd = os.open(root, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        out.write(
            f"waiting: {describe_holder(root)} is using this checkout's generated files"
            f" (docs/auto_examples, _build); `{what}` starts when it is done"
            " (Ctrl-C to give up)\n"
        )
        out.flush()
        fcntl.flock(fd, fcntl.LOCK_EX)
    _held[root] = fd
    holder = _holder_file(root)
    holder.parent.mkdir(parents=True, exist_ok=True)
    since = time.strftime("%H:%M:%S")
    holder.write_text(f"`{what}` (pid {os.getpid()}, since {since})\n", "utf-8")
    os.environ[INHERITED] = root  # the processes this one starts hold it too
    return True


def release(root):
    """Give back *root*'s lock if this process took it."""
    root = str(Path(root).resolve())
    fd = _held.pop(root, None)
    if fd is None:
        return
    if os.environ.get(INHERITED) == root:
        del os.environ[INHERITED]
    with contextlib.suppress(OSError):
        _holder_file(root).unlink()
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


@contextlib.contextmanager
def held(root, what):
    """Hold *root*'s lock for the ``with`` block (a no-op if an ancestor holds it)."""
    took = acquire(root, what)
    try:
        yield
    finally:
        if took:
            release(root)


# -- Sphinx extension: every Sphinx process on this checkout takes the lock ----


def _sphinx_release(app, exception):
    release(Path(app.confdir).parent)


def setup(app):
    """Take the lock before anything is generated; give it back when the build ends."""
    what = os.environ.get("DP_COMMAND") or "sphinx-build " + " ".join(sys.argv[1:3])
    acquire(Path(app.confdir).parent, what)
    app.connect("build-finished", _sphinx_release, priority=1000)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


def run_held(what, work, failures=()):
    """Return ``work()``'s exit code, run holding this checkout's lock.

    A ValueError (bad usage) is printed and exits 2, an exception of
    *failures* 1, Ctrl-C 130. ``$DP_COMMAND`` (the Makefile's target) names
    the holder, else *what*.
    """
    try:
        with held(ROOT, os.environ.get("DP_COMMAND") or what):
            return work()
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except failures as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def main(argv=None):
    """Run a command under the lock: ``checkout_lock.py WHAT -- COMMAND...``."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 3 or argv[1] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    return run_held(argv[0], lambda: subprocess.run(argv[2:]).returncode)


if __name__ == "__main__":
    sys.exit(main())
