"""Let the languages started beside the first one reuse its executed examples.

``build_site.py`` starts every language at once. The first (the *lead*)
generates the gallery: it executes the changed examples and writes their
pages into ``docs/auto_examples/``. The others (*followers*, started with
``DP_GALLERY_WAIT``) load Sphinx meanwhile, wait until the lead says the
gallery is ready, and then only read it: Sphinx-Gallery's generation step is
switched off in them, so no two processes ever write the same generated file
(two followers regenerating the gallery's index at once used to remove each
other's ``index.rst.new``). A follower checks that every example's page is
there and was made from the current source, and fails otherwise. The PDF and
EPUB builds (``build_offline.py``) are followers of the last HTML build.

It also skips importing matplotlib in a build that will execute no example:
Sphinx-Gallery imports ``matplotlib.pyplot`` in every build, even when
nothing runs, which costs about 0.4 s of each translator's rebuild. An
example runs only if its source differs from the copy Sphinx-Gallery last
executed (it keeps the checksum in ``<gallery>/<name>.py.md5``, computed with
its own ``get_md5sum``).
"""

import os
import sys
import time
from pathlib import Path

from sphinx.errors import ExtensionError

WAIT = "DP_GALLERY_WAIT"  # set by build_site.py: the lead's "ready" marker file


def is_follower():
    """True in a language build that must reuse the lead's gallery."""
    return bool(os.environ.get(WAIT))


def stale_examples(examples, gallery):
    """Return the examples in *examples* that Sphinx-Gallery would execute again.

    That is those whose checksum in *gallery* is missing or differs from the source.
    """
    from sphinx_gallery.utils import get_md5sum

    stale = []
    for source in sorted(Path(examples).glob("*.py")):
        checksum = Path(gallery, source.name + ".md5")
        if not checksum.is_file() or checksum.read_text() != get_md5sum(source, mode="t"):
            stale.append(source.name)
    return stale


def outdated_gallery(examples, gallery):
    """Return the examples, and gallery pages, that keep *gallery* from being reused as it is."""
    examples, gallery = Path(examples), Path(gallery)
    stale = stale_examples(examples, gallery)
    pages = [gallery / "index.rst"] + [gallery / (p.stem + ".rst") for p in examples.glob("*.py")]
    return stale + [page.name for page in pages if not page.is_file()]


def nothing_to_run(examples, gallery):
    """True if every example in *examples* matches its last executed copy in *gallery*."""
    return not stale_examples(examples, gallery)


def skip_matplotlib_if_nothing_runs(examples, gallery):
    """Block ``import matplotlib`` in this process if no example will execute."""
    if "matplotlib" in sys.modules:
        return
    if is_follower() or nothing_to_run(examples, gallery):
        sys.modules["matplotlib"] = None  # importing it now raises ImportError


def wait_for_examples(app):
    """Hold a follower, fully loaded, until the lead has generated the gallery.

    It gives up if the lead failed (build_site.py writes ``<marker>.failed``)
    or if build_site.py itself is gone.
    """
    ready = os.environ[WAIT]
    ready, failed, parent = Path(ready), Path(ready + ".failed"), os.getppid()
    while not ready.exists():
        if failed.exists() or os.getppid() != parent:
            raise ExtensionError(
                "not built: the first language's build failed before its examples ran"
            )
        time.sleep(0.05)


def check_gallery_is_current(app):
    """In place of generating the gallery: make sure the lead's pages are current."""
    conf = app.config.sphinx_gallery_conf
    examples, gallery = conf["examples_dirs"], conf["gallery_dirs"]
    examples = examples if isinstance(examples, str) else examples[0]
    gallery = gallery if isinstance(gallery, str) else gallery[0]
    stale = outdated_gallery(Path(app.srcdir, examples), Path(app.srcdir, gallery))
    if stale:
        raise ExtensionError(
            "the gallery this language was to reuse is missing or out of date for: "
            + ", ".join(stale)
        )


def switch_off_generation(app, config):
    """Disconnect Sphinx-Gallery's generation step, and its report on it, in a follower."""
    from sphinx_gallery.gen_gallery import generate_gallery_rst, summarize_failing_examples

    for event, handler in (("builder-inited", generate_gallery_rst),
                           ("build-finished", summarize_failing_examples)):  # fmt: skip
        for listener in list(app.events.listeners[event]):
            if listener.handler is handler:
                app.disconnect(listener.id)


def setup(app):
    """In a follower: wait for the lead, then read its gallery without regenerating it."""
    if is_follower():
        app.connect("config-inited", switch_off_generation)
        app.connect("builder-inited", wait_for_examples, priority=100)
        # Where Sphinx-Gallery would generate the gallery (priority 500).
        app.connect("builder-inited", check_gallery_is_current, priority=500)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
