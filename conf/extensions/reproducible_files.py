"""Zips the build writes the same way every time: every entry dated alike.

Sphinx-Gallery zips each example's files with their times, the only thing that
made two builds differ byte for byte: :func:`normalise_zips` rewrites its zips,
and localized_examples.py writes the translated ones, with :func:`zipped`.
"""

import io
import os
import time
import zipfile

from extensions.example_guard import gallery_dirs
from site_layout import write_if_changed


def zipped(entries):
    """The bytes of a zip of *entries* [(name, bytes)], each entry readable by all and dated
    SOURCE_DATE_EPOCH, or 1980-01-01 (the earliest date a zip can hold) without it."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    stamp = time.gmtime(int(epoch))[:6] if epoch else (1980, 1, 1, 0, 0, 0)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def normalise_zips(app):
    """Give every gallery zip's entries :func:`zipped`'s date."""
    for archive in sorted(gallery_dirs(app)[1].glob("*.zip")):
        with zipfile.ZipFile(archive) as old:
            entries = [(info.filename, old.read(info)) for info in old.infolist()]
        write_if_changed(archive, zipped(entries))


def setup(app):
    """Run after Sphinx-Gallery has generated the gallery (priority 500), before
    example_guard.py declares it complete (900)."""
    app.connect("builder-inited", normalise_zips, priority=850)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
