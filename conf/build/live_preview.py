"""Live preview of one language: rebuild on every save, reload the page (make livehtml).

Serves ``_build/html/`` at ``http://HOST:PORT/`` and rebuilds ``<LANG>`` there
whenever a file under ``docs/``, ``examples/``, ``locale/`` or ``conf/``
changes (not the generated gallery nor the compiled catalogs); open pages
reload themselves. Each rebuild is ``make html``'s build of that language
(build.site.build_local): the same checks, options, pages, stamps and staging
copy swapped in only if it passed. So a preview started after ``make html``
rebuilds nothing, and after the preview ``make html`` and ``make review-diff``
find the pages current. After a failed rebuild every page carries a banner in
its language saying why (extensions/preview_banner.py). The other languages
are the last ``make html``'s, so that the language switcher works.

Unlike sphinx-autobuild, which starts a new ``sphinx-build`` for every change,
one process imports Sphinx, the extensions' libraries and jieba's dictionary
once (build.site.warm_up) and forks a warm child for each rebuild.
"""

import argparse
import errno
import functools
import http.server
import importlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path


from build.site import in_child, warm_up
from languages import LANGUAGES, TRANSLATIONS, by_sphinx_code, select
from extensions.preview_banner import banner
from site_layout import BUILD, ROOT, write_if_changed

WATCHED = ("docs", "examples", "locale", "conf")
NOT_WATCHED = ("docs/auto_examples/",)
# What a build writes among the watched files: Sphinx-Gallery's table of run times.
GENERATED = {"docs/sg_execution_times.rst"}
STATUS, RELOAD = "/_live/status", "/_live/reload.js"  # the paths live_reload.js polls and is at
RELOAD_SCRIPT = (Path(__file__).parent / "live_reload.js").read_bytes()
RELOAD_TAG = b'<script src="%s"></script>' % RELOAD.encode()
POLL_SECONDS = 0.1


def snapshot(root):
    """Return {path: (mtime, size)} of every watched file."""
    files = {}
    for folder in WATCHED:
        for directory, subdirs, names in os.walk(root / folder):
            subdirs[:] = [d for d in subdirs if d != "__pycache__"]
            rel = Path(directory).relative_to(root).as_posix() + "/"
            if rel.startswith(NOT_WATCHED):
                subdirs[:] = []
                continue
            for name in names:
                if name.endswith((".mo", ".pyc", "~", ".swp")) or rel + name in GENERATED:
                    continue
                path = os.path.join(directory, name)
                try:
                    stat = os.stat(path)
                except FileNotFoundError:
                    continue  # removed while we looked
                files[path] = (stat.st_mtime_ns, stat.st_size)
    return files


OURS = tuple(str(ROOT / folder) + os.sep for folder in ("conf", "examples"))


def is_ours(module):
    """True for a module of this repository (conf/, examples/): never kept warm."""
    return str(getattr(module, "__file__", "") or "").startswith(OURS)


def errors_of(log):
    """The warning and error lines of a Sphinx run's output *log*, for the banner."""
    wanted = r"\b(ERROR|WARNING|CRITICAL)\b|^error|^\S+:\d+: \["  # the last: a catalog's error
    lines = [line for line in log.splitlines() if re.search(wanted, line)]
    return "\n".join(lines[:20]) or log.strip()[-2000:]


def rebuild(lang, log, before):
    """In the child: what make html checks first, then make html's build of *lang*.

    Returns (why it failed or '', the modules it imported but those of *before*).
    Sphinx's and the build's messages go to the terminal and to *log*, for the banner.
    """
    for name, module in list(sys.modules.items()):
        if is_ours(module):
            del sys.modules[name]
    # Imported again after the lines above: an edit to conf/ is what runs.
    from build import site
    from checkout_lock import held

    with held(ROOT, os.environ.get("DP_COMMAND") or f"live preview of {lang}"):
        return check_and_build(site, lang, log), [
            n for n in set(sys.modules) - before if not is_ours(sys.modules[n])
        ]


def check_and_build(site, lang, log):
    """Build *lang* as make html does (:func:`rebuild`); return why it was not published, or ''.

    make html's checks refuse a catalog's errors, each with its file and line, before
    Sphinx (syntax) or while it runs (the content checks); Sphinx's warnings fail it.
    """
    with open(log, "w+", encoding="utf-8") as said:
        saved = os.dup(2)
        os.dup2(said.fileno(), 2)  # the checks' errors and Sphinx's warnings, for the banner too
        try:
            built = site.build_local([lang])
        except site.BuildError as err:
            built = False
            print(err, file=sys.stderr)
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
        said.seek(0)
        text = said.read()
    sys.stderr.write(text)
    return "" if built else errors_of(text) or "the build failed (see the terminal)"


def build(lang, log):
    """Rebuild *lang* in a child forked from this warm process.

    Returns (why it failed or '', seconds, modules it imported).
    """
    start = time.perf_counter()
    try:
        why, imported = in_child(rebuild, lang, log, set(sys.modules))()
    except Exception as err:  # noqa: BLE001  the banner says it
        why, imported = f"error: {err!r}", []
        print(why, file=sys.stderr)
    return why, time.perf_counter() - start, imported


# Imported by a rebuild, but not kept warm: torch starts OpenMP threads that a forked child cannot use.
NEVER_WARM = ("torch", "__main__")


def keep_warm(names):
    """Import *names* here, so that the next rebuilds start with them loaded."""
    for name in sorted(names):
        if name.split(".")[0] in NEVER_WARM or name in sys.modules:
            continue
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001  a module that only imports inside Sphinx
            pass


class PreviewHandler(http.server.SimpleHTTPRequestHandler):
    """Serve the built pages, each with the reload script, and the build status, only to
    requests for its own address (a page of another site resolving to 127.0.0.1 is refused)."""

    status_file = None  # set by serve()
    home = "/"
    hosts = ()  # the Host: values this preview answers, set by serve()
    lang = None  # the previewed language; the others are the last make html's

    def log_message(self, *args):
        pass

    def parse_request(self):
        if not super().parse_request():
            return False
        if self.headers.get("Host", "").lower() not in self.hosts:
            self.send_error(421, "This preview answers only requests for its own address")
            return False
        return True

    def do_GET(self):
        if self.path == "/":
            self.send_response(302)
            self.send_header("Location", self.home)
            return self.end_headers()
        if self.path == STATUS:
            return self.send_bytes(self.status_file.read_bytes(), "application/json")
        if self.path == RELOAD:
            return self.send_bytes(RELOAD_SCRIPT, "text/javascript")
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        if path.suffix == ".html" and path.is_file():
            page = path.read_bytes()
            cut = page.rfind(b"</body>")
            cut = len(page) if cut < 0 else cut
            return self.send_bytes(page[:cut] + self.banner() + RELOAD_TAG + page[cut:], "text/html")
        if not path.exists() and self.path.split("/")[1:2] != [self.lang]:
            other = self.path.split("/")[1]
            return self.send_error(
                404,
                f"{other or 'This page'} is not built: the preview shows"
                f" {self.lang} as you edit it and the other languages from the"
                " last make html; run make html to build them",
            )
        return super().do_GET()

    def banner(self):
        """After a failed rebuild, the banner saying why, in the page's language."""
        try:
            status = json.loads(self.status_file.read_text())
        except (OSError, ValueError):
            return b""
        if status.get("ok", True):
            return b""
        html = banner(ROOT / "locale", self.lang, status.get("why", ""), by_sphinx_code(self.lang).html)
        return html.encode("utf-8")

    def send_bytes(self, body, kind):
        self.send_response(200)
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)


def serve(listener, directory, status_file, lang):
    """Serve *directory* on the already bound *listener* socket until the parent exits."""
    handler = functools.partial(PreviewHandler, directory=str(directory))
    PreviewHandler.status_file = Path(status_file)
    PreviewHandler.home = f"/{lang}/index.html"
    PreviewHandler.lang = lang
    host, port = listener.getsockname()[:2]
    names = {host, "localhost"} if host in ("127.0.0.1", "::1") else {host}
    PreviewHandler.hosts = {f"{name}:{port}" for name in names}
    server = http.server.ThreadingHTTPServer(listener.getsockname()[:2], handler, bind_and_activate=False)
    server.socket.close()
    server.socket = listener
    threading.Thread(target=server.serve_forever, daemon=True).start()
    parent = os.getppid()
    while os.getppid() == parent:  # never outlive the preview
        time.sleep(0.5)


def bind(host, port):
    """Return a listening socket on *host*:*port*; ValueError saying why there is none."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # As every server does: a port left in TIME_WAIT by a stopped preview is
    # free; one another program listens on is still refused.
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as err:
        listener.close()
        if err.errno == errno.EADDRINUSE:
            raise ValueError(
                f"port {port} on {host} is in use (another preview?); choose another one: make livehtml PORT={port + 1}"
            ) from None
        raise ValueError(f"cannot listen on {host}:{port}: {err.strerror}") from None
    listener.listen(16)
    return listener


def build_the_others(lang):
    """Build, once, the languages ``_build/html/`` lacks, so that the switcher's links work."""
    missing = [
        other.sphinx
        for other in LANGUAGES
        if other.sphinx != lang and not (BUILD / "html" / other.sphinx / "index.html").is_file()
    ]
    if not missing:
        return
    print(f"Building {' '.join(missing)} once with make html, for the language switcher...", flush=True)
    env = {**os.environ, "DP_COMMAND": f"make html for the preview of {lang}"}
    subprocess.run([sys.executable, "-m", "build.site", "html", *missing], cwd=ROOT, env=env)


def write_status(status_file, build_number, ok, seconds, why=""):
    """Record the last build for the pages' reload script and banner (atomically)."""
    status = {"build": build_number, "ok": ok, "seconds": seconds, "why": why}
    write_if_changed(status_file, json.dumps(status).encode())


def main(argv=None):
    """Parse the command line, serve, and rebuild on every change until Ctrl-C."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "language",
        metavar="LANG",
        nargs="*",
        help="the one language to preview (default: the first translation)",
    )
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args(argv)
    try:
        langs = select(args.language) if args.language else TRANSLATIONS[:1]
        if len(langs) != 1:
            raise ValueError(f"the preview shows one language at a time, not {' '.join(langs)}")
        listener = bind(args.host, args.port)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    lang = langs[0]
    os.environ.setdefault("DP_COMMAND", f"live preview of {lang}")  # for checkout_lock

    live = BUILD / "live"  # the build's status, read by the pages' reload script and the banner
    live.mkdir(parents=True, exist_ok=True)
    status_file, log = live / f".{lang}.status.json", live / f"{lang}.log"
    write_status(status_file, 0, True, 0.0)
    server = os.fork()
    if server == 0:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        serve(listener, BUILD / "html", status_file, lang)
        os._exit(0)
    listener.close()
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stop as on Ctrl-C

    url = f"http://{args.host}:{args.port}/{lang}/index.html"
    try:
        warm_up([lang])
        print(f"Building {lang} where make html does, if it changed since (later rebuilds take seconds)...")
        number = 0
        while True:
            before = snapshot(ROOT)
            why, seconds, imported = build(lang, log)
            keep_warm(imported)
            number += 1
            write_status(status_file, number, not why, seconds, why)
            verdict = (
                "rebuilt"
                if not why
                else "rebuild FAILED (see above; serving the last good pages, with a banner)"
            )
            print(f"[{time.strftime('%H:%M:%S')}] {verdict} in {seconds:.1f} s: {url}", flush=True)
            if number == 1:
                build_the_others(lang)
            while snapshot(ROOT) == before:
                time.sleep(POLL_SECONDS)
            time.sleep(0.05)  # let an editor finish writing (save = write + rename)
    except KeyboardInterrupt:
        print("\nStopped the preview.")
        return 0
    finally:
        os.kill(server, signal.SIGKILL)
        os.waitpid(server, 0)


if __name__ == "__main__":
    sys.exit(main())
