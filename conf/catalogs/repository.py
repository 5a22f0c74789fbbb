"""git, as the translation tools ask it: the committed catalogs, the base of a change."""

import subprocess

from site_layout import ROOT


class ReviewError(Exception):
    """Bad usage: an unknown revision, no base to compare with, no git repository."""


def git(*args, cwd=ROOT):
    """Run git; return its output, or raise ReviewError with git's own message."""
    try:
        result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    except OSError as err:  # no git at all
        raise ReviewError(f"cannot run git: {err.strerror}") from None
    if result.returncode != 0:
        raise ReviewError(result.stderr.strip() or f"git {' '.join(args)} failed")
    return result.stdout
