"""Rewrite Sphinx-Gallery's per-example zips with SOURCE_DATE_EPOCH timestamps.

Sphinx-Gallery zips each example's .py and .ipynb with their file times, the
only thing that made two otherwise identical builds differ byte for byte.
"""

import os
import time
import zipfile
from pathlib import Path

from .gallery_reuse import is_follower


def normalise_zips(app):
    """With SOURCE_DATE_EPOCH set, give every gallery zip entry that date."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if not epoch or is_follower():
        return  # a follower only reads the lead's gallery
    stamp = time.gmtime(int(epoch))[:6]
    dirs = app.config.sphinx_gallery_conf["gallery_dirs"]
    dirs = [dirs] if isinstance(dirs, str) else dirs
    for archive in sorted(p for d in dirs for p in Path(app.srcdir, d).glob("*.zip")):
        with zipfile.ZipFile(archive) as old:
            entries = [(info, old.read(info)) for info in old.infolist()]
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as new:
            for info, data in entries:
                fixed = zipfile.ZipInfo(info.filename, date_time=stamp)
                fixed.external_attr = 0o644 << 16
                new.writestr(fixed, data, zipfile.ZIP_DEFLATED)


def setup(app):
    """Run after Sphinx-Gallery has generated the gallery (priority 500), before
    example_guard.py declares it complete (900)."""
    app.connect("builder-inited", normalise_zips, priority=850)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
