"""`make livehtml`: every edit a translator makes reaches the served page (on a copy)."""

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from conftest import mini_copy, outside_env
from build import live_preview
from catalogs.po import is_translated, messages, read, write  # conf/ is on sys.path

ROOT = Path(__file__).resolve().parent.parent
TUTORIAL = "auto_examples/plot_01_tiny"  # of the mini site (tests/roots/mini-site)
CATALOG = f"locale/zh_TW/LC_MESSAGES/{TUTORIAL}.po"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def fetch(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.read().decode("utf-8")
    except (urllib.error.URLError, ConnectionError):
        return ""


def wait_for(url, text, timeout=120):
    """Wait until the page at *url* contains *text*; return the page."""
    deadline = time.monotonic() + timeout
    page = ""
    while time.monotonic() < deadline:
        page = fetch(url)
        if text in page:
            return page
        time.sleep(0.2)
    raise AssertionError(f"{text!r} never appeared at {url}; last page ends:\n{page[-1500:]}")


# Starts a command as a terminal does, where Ctrl-C (SIGINT) stops it. A test run
# started in the background (`make test &`, some CI runners) ignores SIGINT, and
# every process it starts would inherit that: the preview would never stop.
FROM_A_TERMINAL = [
    sys.executable,
    "-c",
    "import os, signal, sys; "
    "signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])",
]


@pytest.fixture(scope="module")
def preview(tmp_path_factory):
    """The mini site with `make livehtml LANGUAGE=zh_TW` running on a free port."""
    project = mini_copy(tmp_path_factory.mktemp("preview") / "project")
    port = free_port()
    log = open(project / "preview.log", "w")
    process = subprocess.Popen(
        [*FROM_A_TERMINAL, "make", "--no-print-directory", "livehtml", "LANGUAGE=zh_TW", f"PORT={port}"],
        cwd=project,
        env=outside_env(),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}/zh_TW/"
    try:
        # Its first build done: make html's pages, copied with the project, are there before it.
        wait_for(base.replace("zh_TW/", "_live/status"), '"build": 1', timeout=240)
        yield project, base
    finally:
        os.killpg(process.pid, signal.SIGINT)  # Ctrl-C
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            pytest.fail("the preview did not stop within 30 s of Ctrl-C")
        finally:
            log.close()
    assert "Stopped the preview." in (project / "preview.log").read_text("utf-8")
    # Nothing of the preview is left running.
    assert (
        subprocess.run(
            ["pgrep", "-f", f"build.live_preview zh_TW --port {port}"], capture_output=True
        ).returncode
        == 1
    )


def edit_entry(project, msgid_start, change):
    """Change the zh_TW translation of the tutorial entry starting with *msgid_start*."""
    catalog = read(project / CATALOG)
    entry = next(m for m in messages(catalog) if m.id.startswith(msgid_start) and is_translated(m))
    entry.string = change(entry.string)
    write(catalog, project / CATALOG)
    return entry.string


def test_a_tutorial_catalog_edit_reaches_the_preview(preview):
    project, base = preview
    page = wait_for(base + TUTORIAL + ".html", "</html>")
    assert '<script src="/_live/reload.js">' in page  # the reload script is there
    assert "/_live/status" in fetch(base.replace("zh_TW/", "_live/reload.js"))
    # The first paragraph of prose with a translation: any will do.
    first = next(m for m in messages(read(project / CATALOG)) if is_translated(m) and " " in m.id)
    marker = "預覽測試標記"
    edit_entry(project, first.id[:40], lambda text: text + marker)
    wait_for(base + TUTORIAL + ".html", marker)
    status = fetch(base.replace("zh_TW/", "_live/status"))
    assert '"ok": true' in status


@pytest.mark.browser
def test_the_open_page_reloads_itself_under_the_sites_policy(preview, browser):
    project, base = preview
    context = browser.new_context()
    # Runs again in the reloaded page, before its own scripts.
    context.add_init_script("""window.violations = [];
document.addEventListener("securitypolicyviolation",
  (e) => window.violations.push(e.violatedDirective));""")
    try:
        page = context.new_page()
        page.goto(base + TUTORIAL + ".html")
        page.evaluate("window.notReloaded = true")
        first = next(m for m in messages(read(project / CATALOG)) if is_translated(m) and " " in m.id)
        marker = "重新載入測試標記"
        edit_entry(project, first.id[:40], lambda text: text + marker)
        page.wait_for_function(f"document.body.innerText.includes({marker!r})", timeout=120_000)
        assert page.evaluate("window.notReloaded") is None  # a reload, by the page itself
        assert page.evaluate("window.violations") == []
    finally:
        context.close()


def test_the_preview_answers_only_its_own_address(preview):
    """A page of another site whose name resolves to 127.0.0.1 (DNS rebinding) gets nothing."""
    _, base = preview
    port = urllib.parse.urlsplit(base).port
    for host, expected in (
        (f"127.0.0.1:{port}", 200),
        (f"localhost:{port}", 200),
        (f"evil.example:{port}", 421),
        (f"127.0.0.1:{port + 1}", 421),
        (None, 421),
    ):
        request = urllib.request.Request(base + "index.html")
        if host is None:
            request.add_unredirected_header("Host", "")
        else:
            request.add_unredirected_header("Host", host)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                status, body = response.status, response.read()
        except urllib.error.HTTPError as err:
            status, body = err.code, err.read()
        assert status == expected, host
        assert (b"</article>" in body) == (expected == 200)  # the page, or an error


def test_an_english_page_edit_reaches_the_preview(preview):
    project, base = preview
    index = project / "docs" / "index.md"
    index.write_text(index.read_text("utf-8") + "\nA sentence added while previewing.\n")
    # Not translated yet, so the zh_TW page shows the new English.
    wait_for(base + "index.html", "A sentence added while previewing.")


def test_an_example_edit_reexecutes_it_in_the_preview(preview):
    project, base = preview
    example = project / "examples" / f"{TUTORIAL.split('/')[1]}.py"
    source = example.read_text("utf-8")
    assert '\nprint("one line")\n' in source
    example.write_text(
        source.replace('\nprint("one line")\n', '\nprint("one line")\nprint("executed by the preview")\n', 1)
    )
    page = wait_for(base + TUTORIAL + ".html", "executed by the preview", timeout=240)
    assert re.search(r"sphx-glr-script-out.*executed by the preview", page, re.DOTALL)


def test_a_port_in_use_is_a_clear_error(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert live_preview.main(["zh_TW", "--port", str(port)]) == 2
    said = capsys.readouterr().err
    assert f"port {port} on 127.0.0.1 is in use" in said and f"make livehtml PORT={port + 1}" in said


def test_an_unknown_language_is_a_clear_error(capsys):
    assert live_preview.main(["fr", "--port", str(free_port())]) == 2
    assert "unknown language 'fr'" in capsys.readouterr().err


# -- What the preview serves is what make html would publish (issue 30) -------------

BANNER = 'id="live-preview-failed"'


def without_banner(page):
    """*page* without the preview's banner."""
    start = page.index('<div id="live-preview-failed"')
    return page[:start] + page[page.index("</div>", start) + len("</div>") :]


def wait_for_build(base, after):
    """Wait until the preview finished a build numbered above *after*; return its status."""
    import json

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        text = fetch(base.replace("zh_TW/", "_live/status"))
        status = json.loads(text) if text else {"build": after}
        if status["build"] > after:
            return status
        time.sleep(0.2)
    raise AssertionError("no rebuild happened")


def current_build(base):
    import json

    return json.loads(fetch(base.replace("zh_TW/", "_live/status")))["build"]


def break_and_restore(project, base, breaking):
    """Apply *breaking* to the tutorial's zh_TW catalog; return (status, page) served; restore."""
    path = project / CATALOG
    good = path.read_text("utf-8")
    served_before = fetch(base + TUTORIAL + ".html")
    build = current_build(base)
    try:
        path.write_text(breaking(good), "utf-8")
        status = wait_for_build(base, build)
        page = fetch(base + TUTORIAL + ".html")
    finally:
        build = current_build(base)
        path.write_text(good, "utf-8")
        wait_for_build(base, build)
    return status, page, served_before


def test_an_unterminated_string_is_refused_and_the_last_good_page_served(preview):
    project, base = preview
    entry = next(
        m
        for m in messages(read(project / CATALOG))
        if is_translated(m) and " " in m.id and not set('\\"') & set(m.string)
    )

    def unterminate(text):  # msgstr "...重點回顧  without its closing quote, as in the issue
        line = f'msgstr "{entry.string}"'
        assert line in text, "the entry must be on one line for this test"
        return text.replace(line, line[:-1], 1)

    status, page, before = break_and_restore(project, base, unterminate)
    assert status["ok"] is False and "end-of-line within string" in status["why"]
    assert BANNER in page and BANNER not in before
    # The last good page, byte for byte, under the banner: not the truncated
    # translation that make html would refuse.
    assert without_banner(page) == before
    assert entry.string in page
    # The banner is in the page's language, with the catalog and line make html names.
    assert "最近一次重新建置失敗" in page and 'lang="zh-TW"' in page[page.index(BANNER) :]
    assert f"{CATALOG}:" in page
    # Fixed: the banner is gone.
    assert BANNER not in wait_for(base + TUTORIAL + ".html", entry.string)


def test_a_refused_translation_is_never_served(preview):
    project, base = preview
    entry = next(
        m
        for m in messages(read(project / CATALOG))
        if is_translated(m) and " " in m.id and not set('\\"') & set(m.string)
    )
    planted = " `詳情 <https://evil.example/>`_"  # a link to a host the English does not link

    def plant(text):
        catalog = read(project / CATALOG)
        for message in messages(catalog):
            if message.id == entry.id:
                message.string = entry.string + planted
        from catalogs.po import text as catalog_text

        return catalog_text(catalog, "zh_TW")

    status, page, before = break_and_restore(project, base, plant)
    assert status["ok"] is False and "[safety]" in status["why"]
    assert BANNER in page
    assert "evil.example" not in without_banner(page)  # only the banner may quote it
    assert without_banner(page) == before


def test_the_other_languages_are_served_for_the_switcher(preview):
    _, base = preview
    for lang in ("en", "zh_CN"):  # built once, by make html, after the preview's first build
        wait_for(base.replace("zh_TW/", f"{lang}/") + "index.html", "</html>", timeout=240)


# -- The preview shares make html's pages (issue 65) ---------------------------------


def start_preview(project, lang="zh_TW"):
    """Start `make livehtml LANGUAGE=lang` in *project* on a free port; return (process, base URL, log)."""
    port = free_port()
    log = project / "preview.log"
    process = subprocess.Popen(
        [*FROM_A_TERMINAL, "make", "--no-print-directory", "livehtml", f"LANGUAGE={lang}", f"PORT={port}"],
        cwd=project,
        env=outside_env(),
        stdout=open(log, "w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    return process, f"http://127.0.0.1:{port}/{lang}/", log


def test_the_preview_starts_on_make_htmls_pages_and_leaves_them_current(mini_site):
    """After make html it rebuilds nothing; after a save, make html has nothing to do."""
    from conftest import run_module

    project = mini_site
    first = run_module(project, "build.site", "html")  # here: a copy's recordings have other paths
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    process, base, log = start_preview(project)
    try:
        wait_for(base.replace("zh_TW/", "_live/status"), '"build": 1', timeout=240)
        said = log.read_text("utf-8")
        assert "zh_TW: nothing changed since the last build" in said and "building zh_TW" not in said, said
        changed = edit_entry(project, "It prints", lambda text: text + "（預覽）")
        wait_for(base + TUTORIAL + ".html", "（預覽）")
        wait_for(base.replace("zh_TW/", "_live/status"), '"build": 2')  # its stamps written too
        built = (project / "_build" / "html" / "zh_TW" / f"{TUTORIAL}.html").read_text("utf-8")
        assert changed in built  # the preview wrote make html's pages
    finally:
        os.killpg(process.pid, signal.SIGINT)
        process.wait(timeout=30)
    again = run_module(project, "build.site", "html", "zh_TW")
    assert "zh_TW: nothing changed since the last build" in again.stdout, again.stdout + again.stderr
    stale = subprocess.run(
        [sys.executable, "-c", "from catalogs.source_diff import stale_languages as s; print(s(['zh_TW']))"],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(project / "conf")},
        capture_output=True,
        text=True,
    )
    assert stale.stdout.strip() == "[]", stale.stdout + stale.stderr  # what make review-diff asks


@pytest.mark.browser
def test_the_failure_banner_shows_the_line_on_a_phone(open_page, tmp_path):
    """At 390 px wide the catalog's path breaks: its line number is on the screen."""
    from conftest import SHOTS
    from extensions.preview_banner import banner

    why = f"{ROOT}/locale/zh_TW/LC_MESSAGES/auto_examples/plot_02_dataparallel_in_depth.po:1234: end-of-line within string"
    page = tmp_path / "page.html"
    page.write_text(
        '<!DOCTYPE html><html lang="zh-TW"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1"><title>t</title></head>'
        f"<body><p>頁面</p>{banner(ROOT / 'locale', 'zh_TW', why, 'zh-TW')}</body></html>",
        "utf-8",
    )
    opened = open_page(page.as_uri(), viewport={"width": 390, "height": 844})
    SHOTS.mkdir(parents=True, exist_ok=True)
    opened.screenshot(path=str(SHOTS / "live-preview-banner-390.png"))
    where = opened.evaluate(
        """() => {
        const pre = document.querySelector('#live-preview-failed pre');
        const text = pre.firstChild, at = text.data.indexOf(':1234:');
        const range = document.createRange();
        range.setStart(text, at);
        range.setEnd(text, at + 6);
        const box = range.getBoundingClientRect();
        return {left: box.left, right: box.right, top: box.top, bottom: box.bottom,
                overflow: pre.scrollWidth - pre.clientWidth, width: innerWidth, height: innerHeight};
    }"""
    )
    assert where["overflow"] <= 0, where
    assert 0 <= where["left"] and where["right"] <= where["width"], where
    assert 0 <= where["top"] and where["bottom"] <= where["height"], where
