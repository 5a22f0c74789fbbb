"""Live preview of one language: rebuild on every save, reload the page (make livehtml).

Usage:
    python conf/site_build/live_preview.py [LANG] [--port 8000] [--host 127.0.0.1]

Serves ``_build/live/<LANG>/`` at ``http://HOST:PORT/<LANG>/`` and rebuilds it
whenever a file under ``docs/``, ``examples/``, ``locale/`` or ``conf/``
changes: a catalog edit (the tutorials' catalogs included), a page, an
example (which re-executes, as ``make html`` would) or the build machinery.
The generated ``docs/auto_examples/`` and compiled ``.mo`` files are not
watched. Open pages reload themselves after each successful rebuild; after a
failed one they say so and keep showing the last good build.

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
import errno
import functools
import http.server
import importlib
import json
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # conf/: languages and the packages
from site_layout import BUILD, CONF, ROOT  # noqa: E402

WATCHED = ("docs", "examples", "locale", "conf")
NOT_WATCHED = ("docs/auto_examples/",)
STATUS = "/_live/status"
RELOAD = "/_live/reload.js"
POLL_SECONDS = 0.1
# Loaded by every served page: poll the status, reload after a new build. A
# file, not an inline script: the pages' Content-Security-Policy
# (conf/site_extensions/content_security_policy.py) runs no inline script.
RELOAD_SCRIPT = b"""(() => {
  let seen = null;
  const poll = async () => {
    try {
      const status = await (await fetch("%s", {cache: "no-store"})).json();
      if (seen !== null && status.build !== seen && status.ok) location.reload();
      seen = seen === null || status.ok ? status.build : seen;
      let note = document.getElementById("live-preview-failed");
      if (!status.ok && !note) {
        note = document.createElement("p");
        note.id = "live-preview-failed";
        note.setAttribute("role", "alert");
        note.style.cssText = "position:fixed;bottom:0;left:0;right:0;margin:0;padding:.5em 1em;background:#b00020;color:#fff;z-index:1000";
        note.textContent = "The last rebuild failed; this page is from the last good build. See the terminal.";
        document.body.append(note);
      } else if (status.ok && note) note.remove();
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
    from languages import by_sphinx_code

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


def build(lang, outdir, doctrees):
    """Rebuild *lang* in a forked child; return (ok, seconds, modules it imported)."""
    start = time.perf_counter()
    before = set(sys.modules)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: a fresh Sphinx application, our modules freshly imported
        os.close(read_end)
        code = 1
        try:
            for name, module in list(sys.modules.items()):
                if is_ours(module):
                    del sys.modules[name]
            from sphinx.cmd.build import main

            options = os.environ.get("SPHINXOPTS", "-W --keep-going").split()
            code = main([
                "-b", "html", "-q", "-c", str(CONF), "-D", f"language={lang}",
                "-d", str(doctrees), *options, str(ROOT / "docs"), str(outdir),
            ])  # fmt: skip
            imported = [n for n in set(sys.modules) - before if not is_ours(sys.modules[n])]
            os.write(write_end, "\n".join(imported).encode())
        except BaseException as err:  # noqa: BLE001  report anything, never return
            print(f"error: {err!r}", file=sys.stderr)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        imported = pipe.read().decode().split()
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0, time.perf_counter() - start, imported


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
            return self.send_bytes(page[:cut] + RELOAD_TAG + page[cut:], "text/html")
        return super().do_GET()

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
    host, port = listener.getsockname()[:2]
    names = {host, "localhost"} if host in ("127.0.0.1", "::1") else {host}
    PreviewHandler.hosts = {f"{name}:{port}" for name in names}
    server = http.server.ThreadingHTTPServer(
        listener.getsockname()[:2], handler, bind_and_activate=False
    )
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
            sys.exit(f"error: port {port} on {host} is in use (another preview?);"
                     f" choose another one: make livehtml PORT={port + 1}")  # fmt: skip
        sys.exit(f"error: cannot listen on {host}:{port}: {err.strerror}")
    listener.listen(16)
    return listener


def write_status(status_file, build_number, ok, seconds):
    """Record the last build for the pages' reload script (atomically)."""
    partial = status_file.with_suffix(".tmp")
    partial.write_text(json.dumps({"build": build_number, "ok": ok, "seconds": seconds}))
    partial.replace(status_file)


def main(argv=None):
    """Parse the command line, serve, and rebuild on every change until Ctrl-C."""
    from languages import TRANSLATIONS, select

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("language", metavar="LANG", nargs="*",
                        help="the one language to preview (default: the first translation)")
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
    outdir, doctrees = live / lang, BUILD / "doctrees" / f"live-{lang}"
    outdir.mkdir(parents=True, exist_ok=True)
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
            ok, seconds, imported = build(lang, outdir, doctrees)
            keep_warm(imported)
            number += 1
            write_status(status_file, number, ok, seconds)
            verdict = "rebuilt" if ok else "rebuild FAILED (see above; serving the last good pages)"
            print(f"[{time.strftime('%H:%M:%S')}] {verdict} in {seconds:.1f} s: {url}", flush=True)
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
