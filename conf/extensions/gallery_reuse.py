"""Let the languages built after the first one reuse its executed gallery.

``build_site.py`` builds the first language alone: Sphinx-Gallery executes
the changed examples and writes their pages into ``docs/auto_examples/``.
Then it builds the others side by side with ``-D reuse_gallery=1``: in them
Sphinx-Gallery is given no folder to generate (its configuration's folders
are emptied just while it generates, and put back before Sphinx compares or
saves the configuration), so no two processes ever write the same generated file
(two languages regenerating the gallery's index at once used to remove each
other's ``index.rst.new``), and each checks instead that every example's page
is there and was made from the current source. The PDF and EPUB builds
(``build_offline.py``) reuse the gallery of the last HTML build the same way.

The gallery's folders are this project's config values ``examples_folder``
and ``gallery_folder`` (conf.py gives them to Sphinx-Gallery), so that the
other extensions find the gallery when Sphinx-Gallery is told of none.

Once the first build has completed the gallery it says so
(:func:`announce_gallery`), and the others start while it still writes its
pages.

It also skips importing matplotlib in a build that will execute no example:
Sphinx-Gallery imports ``matplotlib.pyplot`` in every build, even when
nothing runs, which costs about 0.4 s of each translator's rebuild. An
example runs only if its source differs from the copy Sphinx-Gallery last
executed (it keeps the checksum in ``<gallery>/<name>.py.md5``, computed with
its own ``get_md5sum``).
"""

import sys
from pathlib import Path

from sphinx.errors import ExtensionError
from sphinx_gallery.utils import get_md5sum


def stale_examples(examples, gallery):
    """Return the examples in *examples* that Sphinx-Gallery would execute again.

    That is those whose checksum in *gallery* is missing or differs from the source.
    """
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


def skip_matplotlib_if_nothing_runs(examples, gallery):
    """Block ``import matplotlib`` in this process if no example will execute."""
    if "matplotlib" not in sys.modules and not stale_examples(examples, gallery):
        sys.modules["matplotlib"] = None  # importing it now raises ImportError


def gallery_dirs(app):
    """(the examples' folder, the gallery's folder) of this build."""
    return Path(app.srcdir, app.config.examples_folder), Path(app.srcdir, app.config.gallery_folder)


FOLDERS = ("examples_dirs", "gallery_dirs")
_hidden = {}  # Sphinx-Gallery's folders while they are hidden from it


def hide_folders(app):
    """When reusing the gallery, give Sphinx-Gallery no folder to generate."""
    if app.config.reuse_gallery:
        conf = app.config.sphinx_gallery_conf
        _hidden.update((key, conf[key]) for key in FOLDERS)
        conf.update(dict.fromkeys(FOLDERS, []))


def show_folders(app):
    """Put them back: this build's configuration is the same as any other's."""
    app.config.sphinx_gallery_conf.update(_hidden)
    _hidden.clear()


def check_gallery_is_current(app):
    """When reusing the gallery: make sure the pages of the last build are current."""
    if app.config.reuse_gallery:
        stale = outdated_gallery(*gallery_dirs(app))
        if stale:
            raise ExtensionError(
                "the gallery this language was to reuse is missing or out of date for: " + ", ".join(stale)
            )


def announce_gallery(app):
    """Say that the gallery is complete: the other languages may start reusing it.

    ``build_site.py`` gives the first language's build a file to create
    (``-D gallery_ready=PATH``) and starts the others once it exists, while
    the first one still reads and writes its own pages.
    """
    if app.config.gallery_ready:
        Path(app.config.gallery_ready).write_text("")


def setup(app):
    """Register the gallery's folders and ``reuse_gallery``; act on it."""
    app.add_config_value("examples_folder", "../examples", "env", types=[str])
    app.add_config_value("gallery_folder", "auto_examples", "env", types=[str])
    app.add_config_value("reuse_gallery", False, "", types=[bool])
    app.add_config_value("gallery_ready", "", "", types=[str])
    # Around Sphinx-Gallery's generation (builder-inited, priority 500).
    app.connect("builder-inited", hide_folders, priority=450)
    app.connect("builder-inited", check_gallery_is_current, priority=500)
    app.connect("builder-inited", show_folders, priority=550)
    # After example_guard.py found every example run (900): nothing writes the gallery now.
    app.connect("builder-inited", announce_gallery, priority=950)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
