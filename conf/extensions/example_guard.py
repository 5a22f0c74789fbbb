"""Fail the build at once if an example failed, hung, forked unsafely, or did not run.

The examples run in the build's process, one after another. Three hooks make
it behave like ``python example.py`` on a machine with GPUs, even on one
without: :func:`run_as_script`, :func:`arm_timeout` (``example_timeout``) and
:func:`guard_forks`. The gallery's folders are the config values
``examples_folder`` and ``gallery_folder``, relative to the source folder.
"""

import functools
import re
import signal
import sys
from pathlib import Path

from sphinx.errors import ExtensionError


_config = {"timeout": 300.0}
_state = {"example": None, "autograd": False, "audit_hook": False}
_USES_TORCH = re.compile(r"^\s*(?:import|from)\s+torch\b", re.MULTILINE)


def gallery_dirs(app):
    """(the examples' folder, the gallery's folder) of this build."""
    return Path(app.srcdir, app.config.examples_folder), Path(app.srcdir, app.config.gallery_folder)


def example_of(app, docname):
    """The example the gallery page *docname* was made from, or None for other pages."""
    gallery = app.config.gallery_folder + "/"
    source = Path(app.srcdir, app.config.examples_folder, docname.removeprefix(gallery) + ".py")
    return source if docname.startswith(gallery) and source.is_file() else None


class ExampleTimeout(Exception):
    """Raised inside an example that ran past ``example_timeout`` seconds."""


def run_as_script(gallery_conf, script_vars):
    """Sphinx-Gallery ``reset_argv`` hook: the example's module gets ``__file__`` and no
    ``__spec__``, as a script does, so that a fork server's or spawned processes can import
    it again; its forks are guarded (:func:`guard_forks`). No arguments are passed."""
    source = Path(script_vars["src_file"])
    script_vars["example_globals"].update(__file__=str(source), __spec__=None)
    guard_forks(source.name, source.read_text("utf-8"))
    return []


def fork_hazard():
    """Why a copy of this process could not use a GPU, or None."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        return "CUDA was initialised in it"
    if _state["autograd"]:
        return "a backward pass ran in it"
    return None


def _refuse_unsafe_fork(event, args):
    """Audit hook: while an example runs, ``os.fork`` raises if the copy would be unusable."""
    if event in ("os.fork", "os.forkpty") and _state["example"]:
        why = fork_hazard()
        if why:
            raise RuntimeError(
                f"{_state['example']} forked the build's process after {why}; on a machine"
                " with GPUs the copy could not use CUDA or run a backward pass. Start"
                " processes that do not copy this one (a fork server, spawn) instead"
            )


def _note_backward(function):
    """``function`` (torch.autograd's backward or grad), noting that autograd ran."""

    @functools.wraps(function)
    def noted(*args, **kwargs):
        _state["autograd"] = True
        return function(*args, **kwargs)

    noted.dp_noted = True
    return noted


def guard_forks(name, source=None):
    """Watch this process for forks after CUDA or autograd started, while *name* runs.

    On a machine with GPUs such a copy cannot use CUDA or run a backward pass;
    without GPUs nothing fails, so only this guard lets a CPU build notice.
    *source*, the example's text, says whether it will use torch: only then is
    torch imported here (seconds), to note its backward passes from the first one.
    """
    if not _state["audit_hook"]:
        sys.addaudithook(_refuse_unsafe_fork)  # for the life of the process
        _state["audit_hook"] = True
    if "torch" in sys.modules or (source is not None and _USES_TORCH.search(source)):
        import torch.autograd  # here: only for examples that use torch

        for attribute in ("backward", "grad"):
            function = getattr(torch.autograd, attribute)
            if not getattr(function, "dp_noted", False):
                setattr(torch.autograd, attribute, _note_backward(function))
    _state["example"] = name


def stop_guarding():
    """End the watch :func:`guard_forks` started (the audit hook stays, idle)."""
    _state["example"] = None


def arm_timeout(gallery_conf, fname, when):
    """Sphinx-Gallery ``reset_modules`` hook: start or stop the example's alarm."""
    if fname is None:
        return
    if when == "after":
        stop_guarding()  # the fork guard's watch ends with the example
        if hasattr(signal, "SIGALRM"):
            signal.setitimer(signal.ITIMER_REAL, 0)
        return
    if not hasattr(signal, "SIGALRM"):
        return
    name = Path(fname).name
    limit = _config["timeout"]

    def on_alarm(signum, frame):
        raise ExampleTimeout(
            f"example {name} ran longer than {limit:g} s and was stopped "
            "(-D example_timeout=SECONDS changes the limit)"
        )

    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)


def check_examples(app):
    """After the gallery is generated: every example must have run now or before."""
    conf = app.config.sphinx_gallery_conf
    if not str(conf.get("plot_gallery", True)) in ("True", "1", "true"):
        raise ExtensionError("plot_gallery is off: pages would have no output")
    failing = conf.get("failing_examples", {})
    if failing:
        report = "\n".join(f"{Path(path).name} failed:\n{trace}" for path, trace in failing.items())
        raise ExtensionError("example(s) failed, no HTML written\n" + report)
    # Sphinx-Gallery calls an example that ran before and has not changed since "stale".
    ran = {Path(p).name for p in conf["passing_examples"] + conf["stale_examples"]}
    missing = [p.name for p in sorted(gallery_dirs(app)[0].glob("*.py")) if p.name not in ran]
    if missing:
        raise ExtensionError("example(s) did not run: " + ", ".join(missing))


def setup(app):
    """Register the gallery's folders, the timeout setting and the post-gallery check."""
    app.add_config_value("examples_folder", "../examples", "env", types=[str])
    app.add_config_value("gallery_folder", "auto_examples", "env", types=[str])
    app.add_config_value("example_timeout", 300, "", types=[int])
    app.connect(
        "config-inited",
        lambda app, config: _config.update(timeout=float(config.example_timeout)),
    )
    # Sphinx-Gallery generates its pages at builder-inited, priority 500, and
    # reproducible_files.py rewrites its zips at 850: the gallery is complete.
    app.connect("builder-inited", check_examples, priority=900)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
