"""A bad build fails loudly and never replaces the last good site.

The build machinery runs on copies of the mini site (tests/roots/mini-site:
one page, one tiny tutorial), built once per session; what depends on the
real pages (reproducible bytes, a renamed tutorial) on copies of the project.
"""

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest
from bs4 import BeautifulSoup
from conftest import FIGURE_EXAMPLE, ROOT, mini_copy, outside_env, run_module, spaced_fullwidth
from build import site
from catalogs.po import read, write

BROKEN = '"""\nBroken\n======\n"""\n\nraise RuntimeError("deliberately broken example")\n'
HANGS = '"""\nHangs\n=====\n"""\n\nimport time\n\ntime.sleep(600)\n'


@pytest.fixture
def project(mini_site):
    """A copy of the mini site whose last good sites are already there."""
    return mini_site


def digest(folder):
    """Map every file under *folder* to its sha256."""
    return {
        path.relative_to(folder): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def build(project, *langs, timeout=300, **env):
    """Run the site build in *project*; return the completed process."""
    return run_module(project, "build.site", "html", *langs, timeout=timeout, **env)


def assert_untouched(project, lang, before):
    """The language's last good site is exactly as it was, with no leftovers."""
    html = project / "_build" / "html"
    assert digest(html / lang) == before
    assert not (html / f".{lang}.staging").exists()


def test_failing_example_names_it_and_keeps_the_site(project):
    before = {lang: digest(project / "_build" / "html" / lang) for lang in ("en", "zh_TW")}
    (project / "examples" / "plot_99_broken.py").write_text(BROKEN)
    result = build(project, "en", "zh_TW")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "plot_99_broken.py" in output and "Traceback" in output
    assert "deliberately broken example" in output
    # zh_TW, built after English, gave up without executing the example again.
    assert "--- building zh_TW" not in result.stdout
    assert "--- zh_TW: not built: the examples did not all run" in result.stdout
    for lang, digests in before.items():
        assert_untouched(project, lang, digests)


def test_hung_example_is_stopped_by_the_timeout(project):
    before = digest(project / "_build" / "html" / "en")
    (project / "examples" / "plot_99_hangs.py").write_text(HANGS)
    result = build(project, "en", timeout=120, SPHINXOPTS="-W --keep-going -D example_timeout=3")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "plot_99_hangs.py ran longer than 3 s" in output
    assert_untouched(project, "en", before)


# A tutorial that runs a backward pass in its own process, then forks it: on a
# machine with GPUs the copy fails at its first backward pass (or at CUDA).
FORKS_AFTER_BACKWARD = '''"""
Forks after a backward pass
===========================
"""

import multiprocessing

import torch

if __name__ == "__main__":  # not again in the processes that import this file
    torch.ones(1, requires_grad=True).sum().backward()
    with multiprocessing.get_context("fork").Pool(1) as pool:
        print(pool.map(abs, [-1]))
'''
# The same work, with the processes started by a fork server: never a copy of this one.
FORK_SERVER = FORKS_AFTER_BACKWARD.replace('"fork"', '"forkserver"').replace(
    "Forks after a backward pass\n===========================",
    "Starts its processes from a fork server\n=======================================",
)


def test_an_example_that_forks_after_a_backward_pass_fails_on_the_cpu_too(project):
    before = digest(project / "_build" / "html" / "en")
    (project / "examples" / "plot_99_forks.py").write_text(FORKS_AFTER_BACKWARD)
    result = build(project, "en")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert (
        "plot_99_forks.py forked the build's process after a backward pass ran in it;"
        " on a machine with GPUs the copy could not use CUDA or run a backward pass"
    ) in output
    assert_untouched(project, "en", before)
    # After CUDA (as torch reports it), the same: a forked copy could not use it.
    (project / "examples" / "plot_99_forks.py").write_text(
        FORKS_AFTER_BACKWARD.replace(
            "torch.ones(1, requires_grad=True).sum().backward()",
            "torch.cuda.is_initialized = lambda: True  # what plot_01 leaves on a GPU machine",
        )
    )
    result = build(project, "en")
    assert result.returncode != 0
    assert "plot_99_forks.py forked the build's process after CUDA was initialised in it" in (
        result.stdout + result.stderr
    )
    # Started from a fork server, the same example runs: the guard is no blanket refusal.
    (project / "examples" / "plot_99_forks.py").write_text(FORK_SERVER)
    result = build(project, "en")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    page = (project / "docs" / "auto_examples" / "plot_99_forks.rst").read_text("utf-8")
    assert "    [1]" in page


def test_broken_catalog_fails_with_file_and_line_before_any_html(project):
    before = {lang: digest(project / "_build" / "html" / lang) for lang in ("en", "zh_TW")}
    po = project / "locale" / "zh_TW" / "LC_MESSAGES" / "index.po"
    with po.open("a", encoding="utf-8") as catalog:
        catalog.write('\nmsgid "An unterminated\nmsgstr ""\n')
    lines = po.read_text("utf-8").splitlines()
    line = next(n for n, text in enumerate(lines, 1) if "An unterminated" in text)
    result = build(project, "en", "zh_TW")
    assert result.returncode == 1
    # msgfmt notices the missing quote at the end of that line or on the next.
    reported = rf"locale/zh_TW/LC_MESSAGES/index\.po:({line}|{line + 1}):"
    assert re.search(reported, result.stderr), result.stderr
    assert "--- building" not in result.stdout  # not even English was rebuilt
    for lang, digests in before.items():
        assert_untouched(project, lang, digests)


# Loaded into the copy's Sphinx: when the first page is written, say so and
# wait, so the build is killed at a known point halfway through writing.
PAUSE_MID_WRITE = """
import pathlib, time

def pause(app, *args):
    marker = pathlib.Path(app.srcdir).parent / "mid-write"
    if not marker.exists():
        marker.write_text(str(app.outdir))
        time.sleep(600)

def setup(app):
    app.connect("html-page-context", pause)
"""


def test_interrupted_build_keeps_the_site_and_recovers(project):
    before = digest(project / "_build" / "html" / "en")
    (project / "docs" / "index.md").write_text(
        (project / "docs" / "index.md").read_text("utf-8") + "\nOne more sentence.\n", "utf-8"
    )
    conf = project / "conf" / "conf.py"
    good_conf = conf.read_text("utf-8")
    (project / "conf" / "pause_mid_write.py").write_text(PAUSE_MID_WRITE, "utf-8")
    conf.write_text(good_conf + '\nextensions.append("pause_mid_write")\n', "utf-8")
    marker = project / "mid-write"

    process = subprocess.Popen(
        [sys.executable, "-m", "build.site", "html", "en"],
        cwd=project,
        env=outside_env(PYTHONPATH=str(project / "conf")),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 240
        while not marker.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert marker.exists(), "the build never reached the writing phase"
        # Sphinx is writing into the staging copy, not into the published site.
        assert marker.read_text().endswith(".en.staging")
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert digest(project / "_build" / "html" / "en") == before

    conf.write_text(good_conf, "utf-8")
    result = build(project, "en")
    assert result.returncode == 0, result.stderr[-3000:]
    assert not (project / "_build" / "html" / ".en.staging").exists()
    index = (project / "_build" / "html" / "en" / "index.html").read_text("utf-8")
    assert "One more sentence." in index


def test_fresh_builds_are_byte_identical_with_source_date_epoch(tmp_path):
    """Two builds from scratch, examples run each time, write the same bytes.

    On the mini site with a second tutorial that draws a figure: the pages, the
    search index (jieba for zh_TW), the figures drawn in each language and
    their thumbnails, the notebooks and zips.
    """
    project = mini_copy(tmp_path / "project")
    (project / "examples" / "plot_02_figure.py").write_text(FIGURE_EXAMPLE.format(height=1))
    html = project / "_build" / "html"
    digests = []
    for _ in range(2):
        shutil.rmtree(project / "_build", ignore_errors=True)
        shutil.rmtree(project / "docs" / "auto_examples", ignore_errors=True)
        result = build(project, "en", "zh_TW", SOURCE_DATE_EPOCH="1700000000")
        assert result.returncode == 0, result.stderr[-3000:]
        digests.append(digest(html))
    tutorial = (html / "zh_TW/auto_examples/plot_01_tiny.html").read_text("utf-8")
    title = read(project / "locale/zh_TW/LC_MESSAGES/auto_examples/plot_01_tiny.po")
    assert title.get("A tiny tutorial").string in BeautifulSoup(tutorial, "html.parser").h1.get_text()
    made = {path.suffix for path in digests[0]}
    assert {".html", ".js", ".png", ".ipynb", ".zip"} <= made, made
    assert any("zh_TW" in str(path) and "thumb" in str(path) for path in digests[0])
    differing = sorted(
        str(name)
        for name in digests[0].keys() | digests[1].keys()
        if digests[0].get(name) != digests[1].get(name)
    )
    assert differing == []


def test_a_chinese_build_without_the_figures_font_names_it_and_keeps_the_site(project):
    """Where the figures' font is not installed, Matplotlib would draw each Chinese
    character as an empty box: the build names the font and publishes nothing."""
    before = digest(project / "_build" / "html" / "zh_TW")
    (project / "examples" / "plot_02_figure.py").write_text(FIGURE_EXAMPLE.format(height=1))
    module, absent = project / "conf" / "extensions" / "localized_examples.py", "Noto Sans CJK of no region"
    module.write_text(module.read_text("utf-8") + f"\nfigure_family = lambda language: {absent!r}\n", "utf-8")
    result = build(project, "zh_TW")
    said = [line for line in result.stderr.splitlines() if absent in line]
    assert result.returncode != 0 and len(said) == 1, result.stderr[-3000:]  # none of Matplotlib's
    assert "plot_02_figure" in said[0] and "fonts-noto-cjk" in said[0], said
    assert_untouched(project, "zh_TW", before)


def test_unknown_language_is_refused(capsys):
    assert site.main(["html", "fr"]) == 2
    assert "unknown language 'fr'" in capsys.readouterr().err


def test_example_that_would_not_run_fails_the_build(project):
    before = digest(project / "_build" / "html" / "en")
    # Sphinx-Gallery renders a script that does not match filename_pattern
    # without running it: a page with no output.
    (project / "examples" / "intro_not_run.py").write_text(BROKEN.replace("raise", "print"))
    result = build(project, "en")
    assert result.returncode != 0
    assert "did not run: intro_not_run.py" in result.stdout + result.stderr
    assert_untouched(project, "en", before)


def test_turning_execution_off_fails_the_build(project):
    result = build(project, "en", SPHINXOPTS="-W --keep-going -D plot_gallery=0")
    assert result.returncode != 0
    assert "plot_gallery is off" in result.stdout + result.stderr


def test_incremental_build_renames_a_page_everywhere(project):
    """A tutorial retitled in its catalog shows its new title in every page's navigation."""
    catalog = project / "locale/zh_TW/LC_MESSAGES/auto_examples/plot_01_tiny.po"
    po = read(catalog)
    entry = po.get("A tiny tutorial")
    old_title = entry.string
    entry.string = "重新命名的頁面"
    write(po, catalog)

    result = build(project, "zh_TW")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "nothing changed" not in result.stdout  # a tutorial's catalog is an input
    html = project / "_build" / "html" / "zh_TW"
    pages = sorted(html.glob("**/*.html"))
    assert {"index.html", "plot_01_tiny.html", "search.html"} <= {page.name for page in pages}
    for page in pages:
        if page.name in ("genindex.html", "404.html"):
            continue
        text = BeautifulSoup(page.read_text("utf-8"), "html.parser")
        navigation = text.select_one(".sidebar-tree").get_text(" ")
        assert "重新命名的頁面" in navigation, page
        assert old_title not in navigation, page


def test_stale_examples_follow_sphinx_gallerys_checksums(mini_site):
    """The examples the build says it executes are those Sphinx-Gallery's checksums say changed."""
    examples, gallery = mini_site / "examples", mini_site / "docs" / "auto_examples"
    assert site.stale_examples(examples, gallery) == []  # the build just executed them all
    (examples / "plot_01_tiny.py").write_text((examples / "plot_01_tiny.py").read_text() + "print(2)\n")
    assert site.stale_examples(examples, gallery) == ["plot_01_tiny.py"]


# A tutorial that counts its executions in a file beside the examples' folder.
COUNTS_ITS_RUNS = '''"""
Counts its runs
===============
"""

from pathlib import Path

with open(Path(__file__).parent.parent / "runs.txt", "a") as runs:
    runs.write("ran\\n")
'''


def test_each_example_executes_once_for_every_language_and_offline_copy(tmp_path):
    """Built one after another, the languages after the first and the EPUB execute nothing."""
    project = mini_copy(tmp_path / "project")  # nothing executed yet
    (project / "examples" / "plot_02_counts.py").write_text(COUNTS_ITS_RUNS, "utf-8")
    result = build(project, "en", "zh_CN", "zh_TW")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert (project / "runs.txt").read_text() == "ran\n"
    said = re.findall(r"^--- (.+) executes (\d+) example", result.stdout, re.M)
    assert said == [("en", "2"), ("the extraction of the English", "0"), ("zh_CN", "0"), ("zh_TW", "0")]
    result = run_module(project, "build.offline", "epub", "zh_TW")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert (project / "runs.txt").read_text() == "ran\n"


# Loaded into the copy's Sphinx: when the first page is written, say so and
# wait until the test creates "resume", holding the checkout's build lock.
PAUSE_UNTIL_RESUMED = """
import pathlib, time

def pause(app, *args):
    root = pathlib.Path(app.srcdir).parent
    marker = root / "mid-write"
    if not marker.exists():
        marker.write_text(str(app.outdir))
        while not (root / "resume").exists():
            time.sleep(0.05)

def setup(app):
    app.connect("html-page-context", pause)
"""


def start_paused_build(project, *langs):
    """Start a build of *project* that stops at its first page; return (process, marker)."""
    (project / "conf" / "pause_until_resumed.py").write_text(PAUSE_UNTIL_RESUMED, "utf-8")
    conf = project / "conf" / "conf.py"
    conf.write_text(conf.read_text("utf-8") + '\nextensions.append("pause_until_resumed")\n')
    env = outside_env(DP_COMMAND="the first build", PYTHONPATH=str(project / "conf"))
    process = subprocess.Popen(
        [sys.executable, "-m", "build.site", "html", *langs],
        cwd=project,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    marker = project / "mid-write"
    deadline = time.monotonic() + 240
    while not marker.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert marker.exists(), "the first build never reached the writing phase"
    return process, marker


def wait_for_text(path, text, timeout=60):
    """Wait until the file at *path* contains *text*; return its content."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        content = path.read_text("utf-8", errors="replace") if path.exists() else ""
        if text in content:
            return content
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never appeared in {path}:\n{content[-2000:]}")


SECOND_COMMANDS = {
    "make html": ["make", "--no-print-directory", "html", "LANGUAGES=zh_TW"],
    "make gettext": ["make", "--no-print-directory", "gettext"],
    "make clean": ["make", "--no-print-directory", "clean"],
}


def test_every_second_build_of_the_checkout_waits_for_the_first(project):
    """A build, an extraction and a clean started while a build writes the checkout's
    pages wait, each saying for what, touch nothing meanwhile, and then run, one at a time."""
    gallery = project / "docs" / "auto_examples"
    first, _ = start_paused_build(project, "en")
    waiting = {}
    try:
        before = {"gallery": digest(gallery), "zh_TW": digest(project / "_build/html/zh_TW")}
        for second, command in SECOND_COMMANDS.items():
            with open(project / f"{second}.log", "w") as out:
                waiting[second] = subprocess.Popen(
                    command, cwd=project, env=outside_env(), stdout=out, stderr=subprocess.STDOUT
                )
        for second in SECOND_COMMANDS:
            text = wait_for_text(project / f"{second}.log", "waiting: ")
            assert "`the first build` (pid " in text and f"`{second}` starts when it is done" in text
        time.sleep(2)  # they really wait: nothing of the first one's was touched
        assert all(process.poll() is None for process in waiting.values())
        assert digest(gallery) == before["gallery"]
        assert digest(project / "_build/html/zh_TW") == before["zh_TW"]
        (project / "resume").touch()
        assert first.wait(timeout=240) == 0
        for second, process in waiting.items():
            assert process.wait(timeout=300) == 0, (project / f"{second}.log").read_text()[-3000:]
    finally:
        (project / "resume").touch()
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
        for process in waiting.values():
            if process.poll() is None:
                process.kill()
                process.wait()


def test_the_lock_goes_with_a_killed_build(project):
    first, _ = start_paused_build(project, "en")
    os.killpg(first.pid, signal.SIGKILL)
    first.wait(timeout=60)
    result = subprocess.run(
        ["make", "--no-print-directory", "gettext"],
        cwd=project,
        env=outside_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "waiting: " not in result.stdout + result.stderr


def test_a_build_started_during_make_test_waits_and_says_for_what():
    """docs/maintaining.md, "How a build works", 4: `make html` started while `make test` reads this
    checkout's site waits for it, and says so: through the lock every build takes, holding
    it for nothing where the build would build."""
    waiting = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"from checkout_lock import held\nwith held({str(ROOT)!r}, 'make html'): pass",
        ],
        cwd=ROOT,
        env=outside_env(PYTHONPATH=str(ROOT / "conf")),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        said = waiting.stderr.readline()  # the lock would have been taken and the line stayed empty
        assert said.startswith("waiting: `make test` (pid "), said
        assert "`make html` starts when it is done" in said
        time.sleep(0.5)
        assert waiting.poll() is None  # still waiting
    finally:
        waiting.kill()
        waiting.wait()


def switcher(project, lang, page):
    """{language code: href or None (said to be not built)} of *page*'s switcher in *lang*."""
    soup = BeautifulSoup((project / f"_build/html/{lang}/{page}.html").read_text("utf-8"), "html.parser")
    links = {}
    for item in soup.select("nav.language-switcher li"):
        link, named = item.select_one("a"), item.select_one("[lang]")
        if item.select_one("[aria-current]") is None:
            links[named["lang"]] = link["href"] if link else None
            assert link or item.select_one(".not-built"), item
            assert not spaced_fullwidth(item.get_text()), item  # 简体中文（尚未建置）
    alternates = {tag["hreflang"] for tag in soup.select('link[rel="alternate"]')}
    assert {code for code, href in links.items() if href} <= alternates
    assert not {code for code, href in links.items() if href is None} & alternates
    return links


def test_a_partial_build_links_no_page_that_is_not_built(project):
    """A page added, then built one language at a time: each switcher links only what exists."""
    index = project / "docs" / "index.md"
    index.write_text(
        index.read_text("utf-8").replace("auto_examples/index\n", "auto_examples/index\nnew\n"), "utf-8"
    )
    (project / "docs" / "new.md").write_text("# A new page\n\nBuilt one language at a time.\n", "utf-8")
    for lang, absent in (("en", {"zh-CN", "zh-TW"}), ("zh_TW", {"zh-CN"}), ("zh_CN", set())):
        result = build(project, lang)
        assert result.returncode == 0, result.stderr[-3000:]
        links = switcher(project, lang, "new")
        assert {code for code, href in links.items() if href is None} == absent, links
        for href in filter(None, links.values()):  # every link leads to a page
            assert (project / "_build/html" / lang / href).resolve().is_file(), href
        # A page every language has is linked everywhere.
        assert None not in switcher(project, lang, "index").values()
    # The English page said the others were not built yet; a build of every language
    # brings it up to date (it rebuilds the English for that, executing nothing).
    result = build(project)
    assert result.returncode == 0 and "executes 0 example(s)" in result.stdout, result.stdout
    assert None not in switcher(project, "en", "new").values()
    assert "nothing changed" in build(project).stdout


def test_the_root_page_sends_visitors_only_to_languages_that_are_built(project):
    shutil.rmtree(project / "_build" / "html")  # a fresh clone
    for lang, built in (("en", {"en"}), ("zh_TW", {"en", "zh_TW"})):
        assert build(project, lang).returncode == 0
        root = (project / "_build/html/index.html").read_text("utf-8")
        assert set(re.findall(r'href="(\w+)/index.html"', root)) == built
        routes = json.loads(re.search(r"var ROUTES = (\[.*?\]);", root)[1])
        assert {target for _, target in routes} == built
        assert None in switcher(project, lang, "index").values()  # zh_CN is not built
