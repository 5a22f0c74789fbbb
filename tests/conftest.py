"""Shared fixtures: one full build of the site for every end-to-end test."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "conf"))

from languages import LANGUAGES  # noqa: E402


@pytest.fixture(scope="session")
def site():
    """Build all three languages once (incrementally) and return _build/html."""
    result = subprocess.run(
        [sys.executable, "conf/build_site.py", "html"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return ROOT / "_build" / "html"


@pytest.fixture(scope="session")
def languages():
    """The site's languages."""
    return LANGUAGES

