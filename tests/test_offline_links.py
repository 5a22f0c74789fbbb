"""The sidebar's "Read offline" links, in a copy of the mini site, read in Chromium.

A copy that is built opens from the served pages, over HTTP and over file://;
one that is not built is named with the command that builds it, never linked.
(The copies' contents: test_offline.py.)
"""

import pytest
from conftest import run_module, spaced_fullwidth

pytestmark = pytest.mark.browser
PAGES = ("index.html", "auto_examples/plot_01_tiny.html")


def sidebar(page):
    """``{label: href}`` of the box's links and the text of its copies not built."""
    box = page.locator(".sidebar-drawer .offline-downloads")
    links = box.locator("a").evaluate_all(
        "(links) => links.map((a) => [a.textContent, a.getAttribute('href')])"
    )
    missing = box.locator(".offline-missing").all_inner_texts()
    return dict(links), missing


def test_a_copy_built_opens_from_the_served_pages_and_one_not_built_says_how(mini_site, serve, open_page):
    pages = mini_site / "_build" / "html"
    for page in PAGES:  # before make pdf / make epub: nothing to open, nothing linked
        links, missing = sidebar(open_page((pages / "en" / page).as_uri()))
        assert links == {} and missing == ["PDF (not built: make pdf)", "EPUB (not built: make epub)"], (
            missing
        )
    for lang in ("zh_CN", "zh_TW"):  # the translation places the brackets, the colon and no space
        missing = sidebar(open_page((pages / lang / "index.html").as_uri()))[1]
        assert [text.rpartition("：")[2] for text in missing] == ["make pdf）", "make epub）"], missing
        assert not any(map(spaced_fullwidth, missing)), missing
    result = run_module(mini_site, "build.offline", "epub", "en")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    epub = (mini_site / "_build" / "epub" / "en" / "data-parallelism-in-pytorch-en.epub").read_bytes()
    for root in (serve(pages), pages.as_uri() + "/"):  # over HTTP, and from the disk
        for page in PAGES:
            opened = open_page(f"{root}en/{page}")
            links, missing = sidebar(opened)
            assert list(links) == ["EPUB"] and missing == ["PDF (not built: make pdf)"], (links, missing)
            with opened.expect_download() as download:
                opened.click(".offline-downloads a")
            assert download.value.failure() is None
            assert open(download.value.path(), "rb").read() == epub, f"{root}en/{page}"
    # The copy travels with the pages: a rebuild of the pages keeps it and its link.
    result = run_module(mini_site, "build.site", "html", "en")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert (pages / "en" / "_offline" / "data-parallelism-in-pytorch-en.epub").read_bytes() == epub
    assert list(sidebar(open_page((pages / "en" / "index.html").as_uri()))[0]) == ["EPUB"]
