"""Fail the build at once if an example failed, hung, or silently did not run."""

import signal
from pathlib import Path

from sphinx.errors import ExtensionError

from .gallery_reuse import gallery_dirs

_config = {"timeout": 300.0}


class ExampleTimeout(Exception):
    """Raised inside an example that ran past ``example_timeout`` seconds."""


def arm_timeout(gallery_conf, fname, when):
    """Sphinx-Gallery ``reset_modules`` hook: start or stop the example's alarm."""
    if fname is None or not hasattr(signal, "SIGALRM"):
        return
    if when == "after":
        signal.setitimer(signal.ITIMER_REAL, 0)
        return
    limit = _config["timeout"]
    name = Path(fname).name

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
        report = "\n".join(
            f"{Path(path).name} failed:\n{trace}" for path, trace in failing.items()
        )
        raise ExtensionError("example(s) failed, no HTML written\n" + report)
    if app.config.reuse_gallery:
        return  # it generated nothing; gallery_reuse.py checks what it reuses
    ran = {Path(p).name for p in conf["passing_examples"] + conf["stale_examples"]}
    missing = [p.name for p in sorted(gallery_dirs(app)[0].glob("*.py")) if p.name not in ran]
    if missing:
        raise ExtensionError("example(s) did not run: " + ", ".join(missing))


def setup(app):
    """Register the timeout setting and the post-gallery check."""
    app.add_config_value("example_timeout", 300, "", types=[int])
    app.connect(
        "config-inited",
        lambda app, config: _config.update(timeout=float(config.example_timeout)),
    )
    # Sphinx-Gallery generates its pages at builder-inited, priority 500, and
    # reproducible_zips.py rewrites its zips at 850: the gallery is complete.
    app.connect("builder-inited", check_examples, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
