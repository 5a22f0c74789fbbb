"""Live preview of one language: rebuild on every save, reload the page (make livehtml).

Usage:
    python conf/build/live_preview.py [LANG] [--port 8000] [--host 127.0.0.1]

Serves ``_build/live/<LANG>/`` at ``http://HOST:PORT/<LANG>/`` and rebuilds it
whenever a file under ``docs/``, ``examples/``, ``locale/`` or ``conf/``
changes: a catalog edit (the tutorials' catalogs included), a page, an
example (which re-executes, as ``make html`` would) or the build machinery.
The generated ``docs/auto_examples/`` and compiled ``.mo`` files are not
watched. Open pages reload themselves after each rebuild.

It serves exactly what ``make html`` would publish, or the last good pages:
each rebuild first runs the checks ``make html`` runs (a catalog gettext
would reject, a translation that breaks its page: build_site.refused), then
Sphinx into a staging copy of the served pages, and swaps that copy in
(atomically: the served folder is a link, replaced at once) only if both
passed. After a failed rebuild every page it serves carries a banner in the
page's language (extensions/preview_banner.py) saying why, as
``make html`` reports it. The other languages are served from
``_build/html/`` (the last ``make html``), so that the language switcher
works.

Why not sphinx-autobuild: it starts a fresh ``sphinx-build`` for every change,
and importing Sphinx, the theme and the extensions plus loading jieba's
dictionary took longer than the rebuild itself. Here one process imports
them once and forks a child for each rebuild, so every rebuild starts warm
and still runs in a process of its own (nothing leaks from one to the next).
Each rebuild takes the checkout's build lock, so it waits for a running
``make html`` and says so.

Exit codes: 0 stopped with Ctrl-C, 2 bad usage (unknown language, port in use).
"""

import argparse
import contextlib
import errno
import functools
import http.server
import importlib
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # conf/: languages and the packages
from languages import LANGUAGES, SOURCE, TRANSLATIONS, by_sphinx_code, select  # noqa: E402
from extensions.preview_banner import banner  # noqa: E402
from site_layout import BUILD, CONF, ROOT, write_if_changed  # noqa: E402

WATCHED = ("docs", "examples", "locale", "conf")
NOT_WATCHED = ("docs/auto_examples/",)
STATUS = "/_live/status"
RELOAD = "/_live/reload.js"
POLL_SECONDS = 0.1
# Loaded by every served page: poll the status, reload after a new build. A
# file, not an inline script: the pages' Content-Security-Policy
# (conf/content_security_policy.py) runs no inline script.
RELOAD_SCRIPT = b"""(() => {
  let seen = null;
  const poll = async () => {
    try {
      const status = await (await fetch("%s", {cache: "no-store"})).json();
      // A new build, good or failed: the server sends the page with its banner.
      if (seen !== null && status.build !== seen) location.reload();
      seen = status.build;
    } catch { /* the preview was stopped */ }
    setTimeout(poll, 250);
  };
  poll();
})();
""" % STATUS.encode()
RELOAD_TAG = b'<script src="%s"></script>' % RELOAD.encode()


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
                if name.endswith((".mo", ".pyc", "~", ".swp")):
                    continue
                path = os.path.join(directory, name)
                try:
                    stat = os.stat(path)
                except FileNotFoundError:
                    continue  # removed while we looked
                files[path] = (stat.st_mtime_ns, stat.st_size)
    return files


def warm_up(lang):
    """Import what every rebuild needs, once, in the process that forks them."""
    import docutils.parsers.rst  # noqa: F401
    import furo  # noqa: F401
    import myst_parser.parsers.sphinx_  # noqa: F401
    import notfound.extension  # noqa: F401
    import babel.messages.pofile  # noqa: F401
    import sphinx.builders.html  # noqa: F401
    import sphinx.cmd.build  # noqa: F401
    import sphinx_copybutton  # noqa: F401
    import sphinx_design  # noqa: F401
    import sphinx_gallery.gen_gallery  # noqa: F401

    if by_sphinx_code(lang).chinese:
        import jieba
        import sphinx.search.zh  # noqa: F401

        jieba.setLogLevel(60)
        jieba.initialize()  # its dictionary is most of a zh build's start-up


OURS = tuple(str(ROOT / folder) + os.sep for folder in ("conf", "examples"))


def is_ours(module):
    """True for a module of this repository (conf/, examples/): never kept warm."""
    return str(getattr(module, "__file__", "") or "").startswith(OURS)


def preflight(lang):
    """Run what ``make html`` checks before it publishes *lang*; return why it would refuse, or ''.

    A catalog gettext would reject stops the build; a translation with errors
    of make check's content checks is not published (build_site.refused,
    which prints each problem). The English the translations are counted
    against is extracted first, as ``make html`` does.
    """
    # Imported here, in the child, after it dropped our modules: an edit to conf/ is what runs.
    from build.site import CONTENT_CHECKS, refused
    from catalogs.merge import ExtractionError, fresh_templates

    if lang == SOURCE.sphinx:
        return ""
    try:
        fresh_templates()
    except ExtractionError as err:
        return f"extracting the English failed:\n{err}"
    said = io.StringIO()
    with contextlib.redirect_stderr(said):
        broken = refused([lang], {"syntax"} | CONTENT_CHECKS)
    sys.stderr.write(said.getvalue())
    return said.getvalue() if broken else ""


def errors_of(log):
    """The warning and error lines of a Sphinx run's output *log*, for the banner."""
    lines = [line for line in log.splitlines() if re.search(r"\b(ERROR|WARNING|CRITICAL)\b|^error", line)]
    return "\n".join(lines[:20]) or log.strip()[-2000:]


def build(lang, outdir, doctrees):
    """Rebuild *lang* into *outdir* in a forked child.

    Returns (why it failed or '', seconds, modules it imported, whether Sphinx ran).
    """
    start = time.perf_counter()
    before = set(sys.modules)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: a fresh Sphinx application, our modules freshly imported
        os.close(read_end)
        code, why, imported, ran = 1, "", [], False
        try:
            for name, module in list(sys.modules.items()):
                if is_ours(module):
                    del sys.modules[name]
            why = preflight(lang)
            if not why:
                from sphinx.cmd.build import main

                ran = True
                options = os.environ.get("SPHINXOPTS", "-W --keep-going").split()
                log = outdir.with_name(outdir.name + ".log")
                with open(log, "w+", encoding="utf-8") as said:
                    saved = os.dup(2)
                    os.dup2(said.fileno(), 2)  # Sphinx's warnings, for the banner too
                    try:
                        code = main(
                            [
                                "-b",
                                "html",
                                "-q",
                                "-c",
                                str(CONF),
                                "-D",
                                f"language={lang}",
                                "-d",
                                str(doctrees),
                                *options,
                                str(ROOT / "docs"),
                                str(outdir),
                            ]
                        )
                    finally:
                        sys.stderr.flush()
                        os.dup2(saved, 2)
                        said.seek(0)
                        text = said.read()
                sys.stderr.write(text)
                why = "" if code == 0 else errors_of(text) or f"sphinx-build exited with {code}"
            imported = [n for n in set(sys.modules) - before if not is_ours(sys.modules[n])]
        except BaseException as err:  # noqa: BLE001  report anything, never return
            why = f"error: {err!r}"
            print(why, file=sys.stderr)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.write(write_end, json.dumps({"why": why, "imported": imported, "sphinx": ran}).encode())
            os._exit(0 if not why else 1)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        said = pipe.read().decode()
    _, status = os.waitpid(pid, 0)
    try:
        result = json.loads(said)
    except ValueError:
        result = {
            "why": "the rebuild stopped unexpectedly (see the terminal)",
            "imported": [],
            "sphinx": True,
        }
    why = result["why"] or ("" if os.waitstatus_to_exitcode(status) == 0 else "the rebuild failed")
    return why, time.perf_counter() - start, result["imported"], result["sphinx"]


class Pages:
    """The served pages of one language: a link to one of two folders, swapped atomically.

    Each rebuild goes into the other folder, first made a copy of the served
    one (mtimes kept: Sphinx rebuilds incrementally); only a good rebuild
    replaces the link, in one rename, so a request sees the old pages or the
    new, never a mix, and a failed rebuild leaves the last good pages served.
    """

    def __init__(self, live, lang):
        self.link = live / lang
        self.folders = [live / f".{lang}.a", live / f".{lang}.b"]
        if self.link.is_dir() and not self.link.is_symlink():  # from an older preview
            shutil.rmtree(self.folders[0], ignore_errors=True)
            self.link.rename(self.folders[0])
        if not self.link.is_symlink():
            self.folders[0].mkdir(parents=True, exist_ok=True)
            self.link.symlink_to(self.folders[0].name)

    def served(self):
        return self.link.parent / os.readlink(self.link)

    def staging(self):
        """A fresh copy of the served pages to rebuild into."""
        served = self.served()
        other = next(f for f in self.folders if f.name != served.name)
        shutil.rmtree(other, ignore_errors=True)
        shutil.copytree(served, other, symlinks=True)
        return other

    def publish(self, folder):
        """Serve *folder* from now on."""
        partial = self.link.with_name(f".{self.link.name}.link")
        partial.unlink(missing_ok=True)
        partial.symlink_to(folder.name)
        partial.replace(self.link)


# Imported by a rebuild, but not kept warm: an example's libraries would start
# threads (torch, OpenMP) that a forked child cannot use.
NEVER_WARM = ("torch", "matplotlib", "numpy", "PIL", "__main__")


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
    """Serve the built pages, each with the reload script, and the build status.

    Only to requests for its own address: a page of another site that makes
    the browser resolve its own name to 127.0.0.1 (DNS rebinding) names that
    site in ``Host:`` and is refused.
    """

    status_file = None  # set by serve()
    home = "/"
    hosts = ()  # the Host: values this preview answers, set by serve()
    lang = None  # the previewed language, served from _build/live/; the others from _build/html/

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

    def translate_path(self, path):
        """The previewed language from _build/live/, every other path from _build/html/."""
        first = path.split("?")[0].split("#")[0].lstrip("/").split("/")[0]
        if first == self.lang:
            return super().translate_path(path)
        return str(
            Path(BUILD / "html", *Path(super().translate_path(path)).relative_to(self.directory).parts)
        )

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
    """Return a listening socket on *host*:*port*, or exit with a clear message."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # As every server does: a port left in TIME_WAIT by a stopped preview is
    # free; one another program listens on is still refused.
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as err:
        listener.close()
        if err.errno == errno.EADDRINUSE:
            sys.exit(
                f"error: port {port} on {host} is in use (another preview?);"
                f" choose another one: make livehtml PORT={port + 1}"
            )
        sys.exit(f"error: cannot listen on {host}:{port}: {err.strerror}")
    listener.listen(16)
    return listener


def build_the_others(lang):
    """Build, once, the languages ``_build/html/`` lacks, so that the switcher's links work.

    The preview serves the other languages from the last ``make html``; where
    a language was never built there, it runs ``make html`` for those.
    """
    missing = [
        other.sphinx
        for other in LANGUAGES
        if other.sphinx != lang and not (BUILD / "html" / other.sphinx / "index.html").is_file()
    ]
    if not missing:
        return
    print(f"Building {' '.join(missing)} once with make html, for the language switcher...", flush=True)
    env = {**os.environ, "DP_COMMAND": f"make html for the preview of {lang}"}
    subprocess.run([sys.executable, str(CONF / "build" / "site.py"), "html", *missing], cwd=ROOT, env=env)


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
    except ValueError as err:
        parser.exit(2, f"error: {err}\n")
    if len(langs) != 1:
        parser.exit(2, f"error: the preview shows one language at a time, not {' '.join(langs)}\n")
    lang = langs[0]
    listener = bind(args.host, args.port)
    os.environ.setdefault("DP_COMMAND", f"live preview of {lang}")  # for checkout_lock

    live = BUILD / "live"
    doctrees = BUILD / "doctrees" / f"live-{lang}"
    live.mkdir(parents=True, exist_ok=True)
    pages = Pages(live, lang)
    status_file = live / f".{lang}.status.json"
    write_status(status_file, 0, True, 0.0)
    server = os.fork()
    if server == 0:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        serve(listener, live, status_file, lang)
        os._exit(0)
    listener.close()
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stop as on Ctrl-C

    url = f"http://{args.host}:{args.port}/{lang}/index.html"
    try:
        warm_up(lang)
        print(f"Building {lang} for the first time (later rebuilds take seconds)...", flush=True)
        number = 0
        while True:
            before = snapshot(ROOT)
            staging = pages.staging()
            why, seconds, imported, ran = build(lang, staging, doctrees)
            keep_warm(imported)
            number += 1
            ok = not why
            if ok:
                pages.publish(staging)
            elif ran:
                # The environment may say pages are current that were never served.
                (doctrees / "environment.pickle").unlink(missing_ok=True)
            write_status(status_file, number, ok, seconds, why)
            verdict = (
                "rebuilt"
                if ok
                else ("rebuild FAILED (see above; serving the last good pages, with a banner)")
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
