"""Fail the build at once if an example failed, hung, or silently did not run."""

import os
import signal
import time
from pathlib import Path

from sphinx.errors import ExtensionError

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
            "(set DP_EXAMPLE_TIMEOUT to change the limit)"
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
    ran = {Path(p).name for p in conf["passing_examples"] + conf["stale_examples"]}
    examples = sorted(Path(app.srcdir, conf["examples_dirs"]).glob("*.py"))
    missing = [p.name for p in examples if p.name not in ran]
    if missing:
        raise ExtensionError("example(s) did not run: " + ", ".join(missing))
    executed = sorted(Path(p).name for p in conf["passing_examples"])
    if executed and os.environ.get("DP_GALLERY_WAIT"):
        raise ExtensionError(
            "example(s) ran again in a build meant to reuse the first language's"
            " results: " + ", ".join(executed)
        )
    ready = os.environ.get("DP_GALLERY_READY")
    if ready:
        Path(ready).touch()  # the languages waiting in wait_for_examples go on


def wait_for_examples(app):
    """Hold a language that build_site.py started next to the first one.

    It has imported and set up everything by now; it waits here, before
    Sphinx-Gallery looks at the examples, until the first build has run them
    (DP_GALLERY_WAIT appears) and then reuses the results. It gives up if the
    first build failed (build_site.py writes ``<DP_GALLERY_WAIT>.failed``) or
    if build_site.py itself is gone.
    """
    ready = os.environ.get("DP_GALLERY_WAIT")
    if not ready:
        return
    ready, failed, parent = Path(ready), Path(ready + ".failed"), os.getppid()
    while not ready.exists():
        if failed.exists() or os.getppid() != parent:
            raise ExtensionError(
                "not built: the first language's build failed before its examples ran"
            )
        time.sleep(0.05)


def setup(app):
    """Register the timeout setting and the post-gallery check."""
    app.add_config_value("example_timeout", 300.0, "")
    app.connect(
        "config-inited",
        lambda app, config: _config.update(timeout=float(config.example_timeout)),
    )
    # Sphinx-Gallery generates its pages at builder-inited, priority 500.
    app.connect("builder-inited", wait_for_examples, priority=100)
    app.connect("builder-inited", check_examples, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
