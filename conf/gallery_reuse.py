"""Skip importing matplotlib in a build that will execute no example.

Sphinx-Gallery imports ``matplotlib.pyplot`` in every build, to select the Agg
backend, even when no example runs; that is about 0.4 s of each translator's
rebuild. An example runs only if its source differs from the copy
Sphinx-Gallery last executed (it keeps the checksum in
``<gallery>/<name>.py.md5``, computed with its own ``get_md5sum``). When every
example is current, or when build_site.py started this language to reuse the
first language's results (``DP_GALLERY_WAIT``, where example_guard.py forbids
running anything), the import is blocked; Sphinx-Gallery tolerates that. If an
example did run anyway, its own ``import matplotlib`` would fail and stop the
build with a traceback, never publish a page without its figure.
"""

import os
import sys
from pathlib import Path


def nothing_to_run(examples, gallery):
    """True if every example in *examples* matches its last executed copy in *gallery*."""
    from sphinx_gallery.utils import get_md5sum

    for source in Path(examples).glob("*.py"):
        checksum = Path(gallery, source.name + ".md5")
        if not checksum.is_file() or checksum.read_text() != get_md5sum(source, mode="t"):
            return False
    return True


def skip_matplotlib_if_nothing_runs(examples, gallery):
    """Block ``import matplotlib`` in this process if no example will execute."""
    if "matplotlib" in sys.modules:
        return
    if os.environ.get("DP_GALLERY_WAIT") or nothing_to_run(examples, gallery):
        sys.modules["matplotlib"] = None  # importing it now raises ImportError
