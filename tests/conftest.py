"""Shared fixtures: one full build of the site for every end-to-end test."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "conf"))

from build.checkout_lock import acquire  # noqa: E402
from languages import LANGUAGES  # noqa: E402


def pytest_configure(config):
    """Hold the checkout's build lock for the whole session.

    The tests read the built site and the executed gallery; a `make html` or
    `make livehtml` started meanwhile waits (saying so) until they are done.
    """
    acquire(ROOT, "make test")


@pytest.fixture(scope="session")
def site():
    """Build all three languages once (incrementally) and return _build/html."""
    result = subprocess.run(
        [sys.executable, "conf/build/build_site.py", "html"],
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

