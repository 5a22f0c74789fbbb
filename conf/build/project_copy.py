"""Copy the project's sources into a scratch folder, for tests and benchmarks."""

import shutil
from pathlib import Path

from site_layout import ROOT


def copy_project(dest, with_gallery=True):
    """Copy sources, catalogs and build machinery into *dest*; return *dest*.

    The copy shares the repository's .venv. With *with_gallery* it also gets
    the already executed gallery (docs/auto_examples), so examples don't rerun.
    """
    dest = Path(dest)
    for name in ("docs", "examples", "conf", "locale"):
        shutil.copytree(ROOT / name, dest / name, symlinks=True)
    if not with_gallery:
        # Only the generated gallery: locale/*/LC_MESSAGES/auto_examples/ are sources.
        shutil.rmtree(dest / "docs" / "auto_examples", ignore_errors=True)
    for name in ("Makefile", "requirements.txt", ".readthedocs.yaml"):
        shutil.copy2(ROOT / name, dest / name)
    (dest / ".venv").symlink_to(ROOT / ".venv")
    return dest
