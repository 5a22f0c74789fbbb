"""Shared fixtures: one full build of the site for every end-to-end test, served
over HTTP and read in one headless Chromium (Playwright).

``make test`` spreads the modules over pytest-xdist workers; each worker has
these session fixtures; the site's build in the checkout runs while no other
worker builds or copies it (:func:`one_worker_at_a_time`).

Tests that need an optional tool carry its marker (``browser``: Chromium;
``gettext``: GNU gettext); where the tool is missing they are skipped, and
the session says so at its start, with how to install it.
"""

import collections
import contextlib
import fcntl
import functools
import hashlib
import http.server
import io
import os
import re
import runpy
import shutil
import subprocess
import sys
import threading
import types
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "conf"))
os.environ["PYTHONPATH"] = str(ROOT / "conf")  # for `python -m build.site` and Sphinx, as make sets it
# What the tests run prints plain text wherever they run: Sphinx colours its
# messages when CI=true or FORCE_COLOR is set, as a CI service sets them, and
# the tests read its lines.
os.environ["NO_COLOR"] = "1"

from checkout_lock import acquire, outside_env  # noqa: E402
from languages import LANGUAGES  # noqa: E402
from site_layout import copy_project as _copy_project  # noqa: E402


# Chromium's headless shell, where it is installed: the Chromium that Playwright's
# headless mode runs by default. The same Blink and V8 as the browser, without its
# interface: a new page costs a third of the browser's CPU (0.16 against 0.49 core-s).
CHROMIUM = os.environ.get("CHROMIUM") or next(
    (path for path in ("/usr/bin/chromium-headless-shell", "/usr/bin/chromium") if Path(path).exists()),
    "/usr/bin/chromium",
)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DESKTOP = {"width": 1280, "height": 900}
SHOTS = ROOT / "_build" / "screenshots"
# The Nu Html Checker, from npm (vnu-jar): .ci/run installs it here.
VNU_JAR = Path(
    os.environ.get("VNU_JAR")
    or Path.home() / ".cache" / "dp-tools" / "node_modules" / "vnu-jar" / "build" / "dist" / "vnu.jar"
)
VNU_INSTALL = "npm install --prefix ~/.cache/dp-tools vnu-jar@26.9.27 (or set VNU_JAR=path)"
# What each optional marker's tests need: (the tool, installed?, how to install it).
CHROMIUM_TOOL = (
    f"Chromium ({CHROMIUM})",
    lambda: Path(CHROMIUM).exists(),
    "apt-get install chromium-headless-shell fonts-noto-cjk, or set CHROMIUM=path",
)
JAVA_TOOL = (
    "a Java runtime (java)",
    lambda: shutil.which("java") is not None,
    "apt-get install default-jre-headless",
)
OPTIONAL_TOOLS = {
    "browser": [CHROMIUM_TOOL],
    "java": [JAVA_TOOL],
    "vnu": [(f"the Nu Html Checker ({VNU_JAR})", VNU_JAR.is_file, VNU_INSTALL), JAVA_TOOL],
    "shellcheck": [
        (
            "shellcheck (for actionlint)",
            lambda: shutil.which("shellcheck") is not None,
            "apt-get install shellcheck",
        )
    ],
    "gettext": [
        (
            "GNU gettext (msgmerge, msgcat, msgattrib)",
            lambda: all(shutil.which(t) for t in ("msgmerge", "msgcat", "msgattrib")),
            "apt-get install gettext (Debian, Ubuntu) or brew install gettext (macOS)",
        )
    ],
}


@functools.cache
def missing_tools():
    """``{marker: [(tool, how to install it), ...]}`` for each marker whose tools are not all here."""
    missing = {}
    for marker, tools in OPTIONAL_TOOLS.items():
        absent = [(what, how) for what, installed, how in tools if not installed()]
        if absent:
            missing[marker] = absent
    return missing


def pytest_configure(config):
    """Register the optional tools' markers; hold the checkout's build lock for the session.

    The tests read the built site and the executed gallery; a `make html` or
    `make livehtml` started meanwhile waits (saying so) until they are done.
    """
    for marker, tools in OPTIONAL_TOOLS.items():
        config.addinivalue_line("markers", f"{marker}: needs {' and '.join(t[0] for t in tools)}")
    config.addinivalue_line(
        "markers", "data: checks the committed catalogs, not the code (-m 'not data' skips it)"
    )
    config.addinivalue_line(
        "markers",
        "site: needs the built site (given to every test using the site fixture); make test runs"
        " the others first: -m 'not site'",
    )
    acquire(ROOT, "make test")


def pytest_report_header(config):
    """Say at the start, once, which optional tools are missing and what that skips.

    The report header is the controller's: with pytest-xdist the workers collect
    the tests and report nothing of their own before the first result.
    """
    lines = []
    tools = {}
    for marker, absent in missing_tools().items():
        for what, how in absent:
            tools.setdefault((what, how), []).append(marker)
    for (what, how), markers in tools.items():
        lines.append(f"missing {what}: the tests marked {', '.join(markers)} will be skipped; install: {how}")
    return lines


def pytest_itemcollected(item):
    """Mark the tests that need the built site (``site``), before ``-m`` selects by it."""
    if "site" in getattr(item, "fixturenames", ()):
        item.add_marker(pytest.mark.site)


# Each test's seconds when it last ran, in pytest's cache (.pytest_cache).
TEST_SECONDS = "dp-tutorial/test-seconds"


def pytest_collection_modifyitems(config, items):
    """Skip the tests whose optional tools are missing, naming what is missing; put the
    modules whose tests took longest last time first.

    ``make test`` hands the workers one module at a time, in this order
    (``--dist=loadfile --no-loadscope-reorder``): longest first, no worker is
    left with a long module while the others have finished. The modules none
    of whose tests the cache knows (new ones; all, in a fresh clone) go first,
    those with the most tests first, as pytest-xdist would order them.
    """
    for item in items:
        for marker, absent in missing_tools().items():
            if item.get_closest_marker(marker):
                names = " and ".join(what for what, _ in absent)
                item.add_marker(pytest.mark.skip(reason=f"missing {names}"))
    cache = getattr(config, "cache", None)  # none with -p no:cacheprovider
    seconds = cache.get(TEST_SECONDS, {}) if cache else {}
    modules = collections.defaultdict(list)
    for item in items:
        modules[item.nodeid.split("::")[0]].append(seconds.get(item.nodeid))
    total = {
        module: sum(filter(None, known)) if any(known) else float("inf") for module, known in modules.items()
    }
    # Stable: each module's tests stay in order. Unknown modules: the most tests first.
    items.sort(key=lambda item: (-total[module := item.nodeid.split("::")[0]], -len(modules[module])))


_test_seconds = collections.Counter()


def pytest_runtest_logreport(report):
    """Add up each test's seconds: its set-up, call and teardown."""
    _test_seconds[report.nodeid] += report.duration


def pytest_sessionfinish(session):
    """Keep the tests' seconds for the next run's order (by the xdist controller, or a plain run)."""
    cache = getattr(session.config, "cache", None)
    if cache and not hasattr(session.config, "workerinput") and _test_seconds:
        cache.set(TEST_SECONDS, {**cache.get(TEST_SECONDS, {}), **_test_seconds})


@contextlib.contextmanager
def one_worker_at_a_time(sources=True):
    """Let one pytest-xdist worker at a time write the checkout's sources; the others wait.

    The workers share the checkout's build lock (taken by the session, see
    pytest_configure), so the site's build takes this one too: the second
    worker finds it built ("nothing changed"). What only reads the sources and
    the executed gallery, and writes nothing or only under _build/ (a copy of
    the project, the offline copies' builds), passes ``sources=False``: it
    waits for such a build, never for another reader.
    """
    with flocked("tests.lock", exclusive=sources):
        yield


def flocked(name, exclusive=True):
    """Hold the lock file _build/*name* (shared, or for this process alone)."""
    return locked(ROOT / "_build" / name, exclusive)


@contextlib.contextmanager
def locked(path, exclusive=True):
    """Hold the lock file *path* (shared, or for this process alone)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield


def run_example(path):
    """Run the example *path* in this process, as the module ``tutorial``; return its globals
    and what it printed. The figures it drew are closed: pyplot would keep them open for the
    life of the process, which runs other tests' examples too."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        namespace = runpy.run_path(str(path), run_name="tutorial")
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")
    return namespace, printed.getvalue()


def sphinx_build(*args):
    """``sphinx-build *args``, run in this process: its exit status and what it printed,
    as subprocess.run returns them (``--no-color`` added: the tests read its lines).

    Sphinx's own command line (build_main), without a new interpreter that imports
    Sphinx, docutils and our extensions again for each fixture project. Sphinx
    resets docutils' roles and directives after a build; the translations it
    loaded are forgotten here, before and after, as sphinx.testing does between
    applications, so that no build sees another language's.
    """
    import sphinx.locale
    from sphinx.cmd.build import build_main

    argv = ["--no-color", *map(str, args)]
    printed, warned = io.StringIO(), io.StringIO()
    sphinx.locale.translators.clear()
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(warned):
            status = build_main(argv)
    finally:
        sphinx.locale.translators.clear()
    return subprocess.CompletedProcess(["sphinx-build", *argv], status, printed.getvalue(), warned.getvalue())


@contextlib.contextmanager
def loaded_as_script(path):
    """The example *path* loaded as its launcher's processes load it; yields its namespace.

    The launchers start processes from a fork server, which import the page's
    file again, as the module ``__mp_main__`` (multiprocessing's name for a
    script re-imported in a child). Loaded the same way here, without running
    its ``if __name__ == "__main__":`` cells, and made this process's
    ``__main__``, its functions and the tests' module-level ones can be sent
    to those processes by name.
    """
    module = types.ModuleType("__mp_main__")
    module.__file__ = str(path)
    exec(compile(Path(path).read_text("utf-8"), str(path), "exec"), module.__dict__)
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sys.modules, "__main__", module)
        patch.setitem(sys.modules, "__mp_main__", module)
        yield module.__dict__


def copy_project(dest, with_gallery=True):
    """site_layout.copy_project, while no other worker builds the site."""
    with one_worker_at_a_time(sources=False):
        return _copy_project(dest, with_gallery)


def run_module(project, module, *args, timeout=900, **env):
    """``python -m module *args`` in the checkout or copy *project*, as its Makefile runs it
    (its own conf/ on the import path, its own build lock); return the completed process."""
    return subprocess.run(
        [sys.executable, "-m", module, *map(str, args)],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=outside_env(PYTHONPATH=str(Path(project) / "conf"), **env),
    )


def spaced_fullwidth(text):
    """The spaces *text* has beside full-width punctuation, which Chinese sets without any."""
    return re.findall(r"\s[（）：，。；]|[（）：，。；]\s", text)


def printed_lines(site, name, lang="en"):
    """Every line the executed tutorial *name* printed, as its built page shows it, in order."""
    html = (site / lang / "auto_examples" / f"{name}.html").read_text("utf-8")
    article = BeautifulSoup(html, "html.parser").find("article")
    return [
        line for pre in article.select(".sphx-glr-script-out pre") for line in pre.get_text().splitlines()
    ]


@pytest.fixture(scope="session")
def site():
    """Build all three languages once (incrementally) and return _build/html."""
    with one_worker_at_a_time():
        result = subprocess.run(
            [sys.executable, "-m", "build.site", "html"], cwd=ROOT, capture_output=True, text=True
        )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return ROOT / "_build" / "html"


MINI = ROOT / "tests" / "roots" / "mini-site"


def mini_copy(dest):
    """A project at *dest*: this checkout's conf/, Makefile, pins and .readthedocs.yaml, and the mini site.

    The mini site (tests/roots/mini-site) has one page, one tiny tutorial and
    their catalogs: the build machinery runs on it in seconds. The copy shares
    the repository's .venv and its glossary.
    """
    dest = Path(dest)
    shutil.copytree(ROOT / "conf", dest / "conf", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.rmtree(dest / "conf" / "recordings")  # of this checkout's examples, not the mini site's
    for name in ("docs", "examples", "locale"):
        shutil.copytree(MINI / name, dest / name)
    for name in ("Makefile", "requirements.txt", ".readthedocs.yaml", "locale/glossary.csv"):
        shutil.copy2(ROOT / name, dest / name)  # keeps the pins' mtime: make reuses .venv
    (dest / ".venv").symlink_to(ROOT / ".venv")
    return dest


# A tutorial that draws a figure, for a copy of the mini site (whose own draws none).
FIGURE_EXAMPLE = '''"""
A figure
========

It draws one line.
"""

import matplotlib.pyplot as plt

fig, ax = plt.subplots()
ax.plot([0, 1], [0, {height}])
ax.set_title("One line")
'''


@pytest.fixture(scope="session")
def mini_built(tmp_path_factory):
    """The mini site, built once in every language: the last good site of its copies.

    One build for the whole session: the first worker to ask builds it in the
    workers' shared temporary folder, the others wait for it and read it.
    Tests copy it (``mini_site``) before they change anything.
    """
    shared = tmp_path_factory.getbasetemp()
    shared = shared.parent if os.environ.get("PYTEST_XDIST_WORKER") else shared
    project, done = shared / "mini-built" / "project", shared / "mini-built" / "done"
    with locked(shared / "mini-built.lock"):
        if not done.exists():
            shutil.rmtree(project.parent, ignore_errors=True)
            mini_copy(project)
            result = run_module(project, "build.site", "html")
            assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
            done.touch()
    return project


@pytest.fixture
def mini_site(mini_built, tmp_path):
    """A copy of the built mini site: its sources, executed gallery and last good sites."""
    return Path(shutil.copytree(mini_built, tmp_path / "project", symlinks=True))


def translate(path, translations):
    """Give the catalog at *path* the *translations* (msgid: msgstr) of the entries it has,
    as a translator would; return those of *translations* it has no entry for."""
    from catalogs.po import messages, read, write

    catalog, left = read(path), dict(translations)
    for message in messages(catalog):
        if message.id in left:
            message.string = left.pop(message.id)
    write(catalog, path)
    return left


@pytest.fixture(scope="session")
def languages():
    """The site's languages."""
    return LANGUAGES


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Static files, quietly; a missing page gets <lang>/404.html, as on Read the Docs."""

    def log_message(self, *args):
        pass

    def send_error(self, code, message=None, explain=None):
        lang = self.path.lstrip("/").split("/", 1)[0]
        page = Path(self.directory, lang, "404.html")
        codes = [language.sphinx for language in LANGUAGES]
        if code != 404 or lang not in codes or not page.is_file():
            return super().send_error(code, message, explain)
        body = page.read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="session")
def base_url(site):
    """Serve the built site on a free port; yield its root URL."""
    handler = functools.partial(SiteHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the session (Playwright allows one sync driver at a time)."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (set CHROMIUM=path)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield PatientBrowser(chromium)
        chromium.close()


# Playwright gives up on a page after 30 s. A CI machine with two busy cores can
# starve Chromium that long (seen once in a fresh-clone .ci/run at load 7),
# so pages get longer; what a test waits for on purpose keeps its own timeout.
PAGE_TIMEOUT_MS = 120_000


class PatientBrowser:
    """The session's Browser, whose new contexts wait PAGE_TIMEOUT_MS for a page."""

    def __init__(self, browser):
        self._browser = browser

    def __getattr__(self, name):
        return getattr(self._browser, name)

    def new_context(self, **options):
        """A browser context whose actions and navigations wait PAGE_TIMEOUT_MS."""
        context = self._browser.new_context(**options)
        context.set_default_timeout(PAGE_TIMEOUT_MS)
        return context


@pytest.fixture
def open_page(browser):
    """Return ``open_page(url, viewport=DESKTOP, **context_options)``; closes them after."""
    contexts = []

    def open_page(url, viewport=DESKTOP, **options):
        context = browser.new_context(viewport=viewport, **options)
        contexts.append(context)
        page = context.new_page()
        page.goto(url)
        return page

    yield open_page
    for context in contexts:
        context.close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Static files, without a log line per request."""

    def log_message(self, *args):
        pass


@pytest.fixture
def serve():
    """Return ``serve(folder)``: its root URL on 127.0.0.1, served until the test ends."""
    servers = []

    def serve(folder):
        handler = functools.partial(QuietHandler, directory=str(folder))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_port}/"

    yield serve
    for server in servers:
        server.shutdown()


# Records what a page's scripts and its policy did, before any of its own scripts run.
WATCH = """
window.__seen = {violations: [], errors: []};
document.addEventListener("securitypolicyviolation",
  (e) => window.__seen.violations.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}`));
window.addEventListener("error", (e) => window.__seen.errors.push(String(e.message)));
"""
# Every element that could run script from an attribute or a URL.
SCRIPTED = """() => [...document.querySelectorAll("*")].flatMap((el) => [...el.attributes]
  .filter((a) => /^on/i.test(a.name) || /^\\s*javascript:/i.test(a.value))
  .map((a) => `<${el.localName} ${a.name}="${a.value}">`))"""


@pytest.fixture
def visit(browser):
    """Return ``visit(url, shot=None, route=None)``: (the settled page, its dialogs, requests).

    ``requests`` lists every URL the page asked for or navigated to, its own included,
    but for those its Content-Security-Policy blocked (Playwright reports them as
    requests that failed with "csp": they never left the browser).
    """
    contexts = []

    def visit(url, shot=None, route=None):
        context = browser.new_context(viewport=DESKTOP)
        contexts.append(context)
        context.add_init_script(WATCH)
        page = context.new_page()
        dialogs, requests, blocked = [], [], set()
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.on("request", lambda request: requests.append(request.url))
        page.on(
            "requestfailed",
            lambda request: "csp" in (request.failure or "").lower() and blocked.add(request.url),
        )
        page.on("framenavigated", lambda frame: requests.append(frame.url))
        if route:
            page.route(url, route)
        page.goto(url)
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(300)  # a <meta http-equiv="refresh" content="0"> would fire by now
        if shot:
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / f"{shot}.png"))
        return page, dialogs, [url for url in requests if url not in blocked]

    yield visit
    for context in contexts:
        context.close()


def readthedocs_commands(pull_request=False):
    """The build jobs of .readthedocs.yaml, in the order Read the Docs runs them, without
    the installs (the tests' environment has the packages).

    For a pull request Read the Docs builds the HTML only: it skips the pdf and
    epub jobs of a version of type "external".
    """
    import yaml

    config = yaml.safe_load((ROOT / ".readthedocs.yaml").read_text("utf-8"))
    assert config["version"] == 2
    jobs = config["build"]["jobs"]["build"]
    formats = ["html"] + ([] if pull_request else config.get("formats", []))
    return [command for fmt in formats for command in jobs[fmt]]


def build_offline(*args):
    """Run ``python -m build.offline *args`` in this checkout; return the completed process."""
    return subprocess.run(
        [sys.executable, "-m", "build.offline", *args], cwd=ROOT, capture_output=True, text=True, timeout=900
    )


def gallery_digest():
    """Hash the executed gallery, to show that the offline builds leave it alone."""
    gallery = ROOT / "docs" / "auto_examples"
    digest = hashlib.sha256()
    for path in sorted(gallery.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(gallery)).encode() + path.read_bytes())
    return digest.hexdigest()


OFFLINE_TOOLS = ("xelatex", "latexmk", "pdftotext", "pdffonts")


@pytest.fixture(scope="session")
def offline(site):
    """Build every language's PDF and EPUB (after the site); return {(fmt, lang): path}."""
    if not all(shutil.which(tool) for tool in OFFLINE_TOOLS):
        pytest.skip("needs TeX Live (xelatex, latexmk) and poppler-utils; see docs/maintaining.md")
    # They write only under _build/; one worker builds them, the other finds them built.
    with one_worker_at_a_time(sources=False), flocked("offline.lock"):
        before = gallery_digest()
        for fmt in ("pdf", "epub"):
            result = build_offline(fmt)
            assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
        assert gallery_digest() == before, "an offline build changed the executed gallery"
    files = {}
    for fmt in ("pdf", "epub"):
        for lang in LANGUAGES:
            found = list((ROOT / "_build" / fmt / lang.sphinx).iterdir())
            assert len(found) == 1, found  # one file per language
            files[fmt, lang.sphinx] = found[0]
    return files
