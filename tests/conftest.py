"""Shared fixtures: one full build of the site for every end-to-end test."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "conf"))

from build.checkout_lock import acquire  # noqa: E402
from languages import LANGUAGES  # noqa: E402

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]  # fmt: skip


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



@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the session (Playwright allows one sync driver at a time)."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (set CHROMIUM=path)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
        yield chromium
        chromium.close()
