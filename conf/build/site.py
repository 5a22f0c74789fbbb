"""Build the HTML site one language after another, never publishing a half-built one.

Each language is built into a staging copy of its last good output and swapped
in only when Sphinx succeeds and its catalogs pass ``make check``'s content
checks; a catalog gettext would reject stops the build before anything is
built. A language none of whose inputs changed since its last good build is
not rebuilt. Sphinx-Gallery executes an example only when its source differs
from the copy it last executed, so the first language built executes the
changed examples and the others execute none. Each Sphinx run is a child forked
from this process, which imports the Sphinx stack (and jieba's dictionary) once.
"""

import argparse
import functools
import hashlib
import html
import importlib
import json
import logging
import os
import pickle
import re
import shutil
import sys
import time
from pathlib import Path

import jieba
from sphinx_gallery.utils import get_md5sum

from languages import LANGUAGES, SOURCE, TRANSLATIONS, browser_tags, by_sphinx_code, from_readthedocs, select
from checkout_lock import held
from content_security_policy import meta, policy, script_hash
from site_layout import BUILD, CONF, EXAMPLES, GALLERY, LOCALE, ROOT, language_digest, linked_copies
from build.outputs import OutputsError, fetch, published
from build.review_page import write_review
from extensions.recordings import choose, committed
from catalogs.diff import resolve_base
from catalogs.merge import ExtractionError, fresh_templates
from catalogs.repository import ReviewError, git
from gate.run_checks import errors

SPHINX_OPTS = os.environ.get("SPHINXOPTS", "-W --keep-going").split()
# Sphinx prints only its warnings and errors unless VERBOSE=1.
QUIET = [] if os.environ.get("VERBOSE", "") not in ("", "0") else ["-q"]
# The checks whose errors keep a translation from being published; out-of-date
# and unfinished entries are published (their English shows).
CONTENT_CHECKS = {"markup", "safety", "interface", "code", "script-mix"}
# What every Sphinx run of conf.py imports: loaded once by warm_up(), not in every run.
SPHINX_STACK = (
    "babel.messages.pofile",
    "docutils.parsers.rst",
    "furo",
    "myst_parser.parsers.sphinx_",
    "notfound.extension",
    "sphinx.builders.html",
    "sphinx.cmd.build",
    "sphinx.search.zh",
    "sphinx_copybutton",
    "sphinx_design",
    "sphinx_gallery.gen_gallery",
    "matplotlib.pyplot",  # Sphinx-Gallery imports it in every build, with agg
)


class BuildError(Exception):
    """The build cannot go on; the message says why."""


def warm_up(langs):
    """Import the Sphinx stack here, and load jieba's dictionary if *langs* hold a Chinese one.

    Only third-party modules: our own are read afresh by each Sphinx run's conf.py.
    """
    importlib.import_module("matplotlib").use("agg")
    for name in SPHINX_STACK:
        importlib.import_module(name)
    if any(by_sphinx_code(lang).chinese for lang in langs):
        jieba.setLogLevel(logging.WARNING)
        jieba.initialize()  # most of a Chinese build's start-up


def in_child(function, *args):
    """Start ``function(*args)`` in a child forked from this process; return ``wait()``, which
    returns its result or raises its exception."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            said = (True, function(*args))
        except BaseException as err:  # noqa: BLE001  the parent raises it
            said = (False, err)
        sys.stdout.flush()
        sys.stderr.flush()
        with os.fdopen(write, "wb") as pipe:
            pickle.dump(said, pipe)
        os._exit(0)
    os.close(write)

    def wait():
        with os.fdopen(read, "rb") as pipe:
            data = pipe.read()
        os.waitpid(pid, 0)
        ok, value = pickle.loads(data) if data else (False, BuildError("a build process died (above)"))
        if not ok:
            raise value
        return value

    return wait


def stale_examples(examples=EXAMPLES, gallery=GALLERY):
    """The examples Sphinx-Gallery would execute: their checksum in *gallery* is missing or old."""
    return [
        source.name
        for source in sorted(Path(examples).glob("*.py"))
        if not (checksum := Path(gallery, source.name + ".md5")).is_file()
        or checksum.read_text() != get_md5sum(source, mode="t")
    ]


def refused(langs, checks):
    """Return (the translations among *langs* whose catalogs have errors of *checks*, the errors)."""
    translations = [lang for lang in langs if lang != SOURCE.sphinx]
    problems = errors(translations, LOCALE, checks) if translations else []
    folders = {lang: (LOCALE / lang).resolve() for lang in translations}
    bad = {lang for p in problems for lang, f in folders.items() if Path(p.path).resolve().is_relative_to(f)}
    return sorted(bad), problems


def check_catalogs(langs, checks):
    """Raise BuildError, listing the errors, if a catalog of *langs* has errors of *checks*."""
    bad, problems = refused(langs, checks)
    if bad:
        listed = "\n".join(map(str, problems))
        raise BuildError(
            f"{listed}\nthe catalogs of {', '.join(bad)} have the errors above; nothing was built"
        )


def extract_english():
    """Extract the current English, which the translations are counted against (catalogs/merge.py)."""
    try:
        said = fresh_templates()[1]
    except ExtractionError as err:
        raise BuildError(f"{err}\nextracting the English failed (above); nothing more was built") from None
    if said.strip():
        print(said.rstrip(), flush=True)


def input_digest(lang, recordings, sources=None):
    """A digest of everything *lang*'s pages are made from: its sources, Sphinx's options, the recordings."""
    digest = hashlib.sha256(" ".join(SPHINX_OPTS + recordings).encode())
    digest.update((sources or language_digest(lang)).encode())
    return digest.hexdigest()


def sphinx_build(lang, outdir, doctrees, recordings, options=(), builder="html"):
    """Run sphinx-build for *lang* in a child process (:func:`in_child`); return its exit code."""
    print(f"--- building {lang} ({builder}) ---", flush=True)
    argv = [
        "-b",
        builder,
        "-c",
        str(CONF),
        "-D",
        f"language={lang}",
        "-d",
        str(doctrees),
        *QUIET,
        *SPHINX_OPTS,
    ]
    argv += [*options, *(["-D", f"recordings={','.join(recordings)}"] if recordings else [])]
    sphinx_main = importlib.import_module("sphinx.cmd.build").main
    return in_child(sphinx_main, [*argv, str(ROOT / "docs"), str(outdir)])()


def build_atomically(lang, final, doctrees, recordings, options=(), publishable=lambda: True, fresh=False):
    """Build *lang* into a staging copy of *final*; swap it in if Sphinx succeeded and ``publishable()``.

    *fresh*: into an empty staging folder, so that Sphinx writes every page.
    Return whether it was published.
    """
    staging, old = final.with_name(f".{final.name}.staging"), final.with_name(f".{final.name}.old")
    for leftover in (staging, old):
        shutil.rmtree(leftover, ignore_errors=True)
    if final.is_dir() and not fresh:
        shutil.copytree(final, staging, symlinks=True)  # keeps mtimes: incremental
    built = sphinx_build(lang, staging, doctrees, recordings, options) == 0
    if not (built and publishable()):
        shutil.rmtree(staging, ignore_errors=True)
        # The environment may say pages are current that were never published.
        (doctrees / "environment.pickle").unlink(missing_ok=True)
        why = "build failed" if not built else "its catalogs have the errors listed above"
        print(f"error: {lang} not published ({why}); {final} was left as it was", file=sys.stderr)
        return False
    if final.exists():
        final.rename(old)
    staging.rename(final)
    shutil.rmtree(old, ignore_errors=True)
    return True


def write_root_index(outdir):
    """Write the page that sends a visitor to the built language their browser prefers."""
    template = (CONF / "_templates" / "root-index.html").read_text("utf-8")
    built = [lang for lang in LANGUAGES if (outdir / lang.sphinx / "index.html").is_file()]
    links = "\n".join(
        f'    <li><a href="{lang.sphinx}/index.html" hreflang="{lang.html}" '
        f'lang="{lang.html}">{html.escape(lang.name)}</a></li>'
        for lang in built
    )
    choose = " · ".join(f'<span lang="{lang.html}">{html.escape(lang.choose)}</span>' for lang in built)
    # Longest tag first, so that zh-tw wins over zh.
    routes = sorted(
        ((tag, lang.sphinx) for lang in built for tag in browser_tags(lang)), key=lambda r: -len(r[0])
    )
    fallback = SOURCE if SOURCE in built else built[0]
    page = (
        template.replace("{{ links }}", links)
        .replace("{{ choose }}", choose)
        .replace("{{ routes }}", json.dumps(routes))
        .replace("{{ fallback }}", json.dumps(fallback.sphinx))
    )
    script = re.search(r"<script>(.*?)</script>", page, re.S)[1]
    (outdir / "index.html").write_text(
        page.replace("{{ policy }}", meta(policy([script_hash(script)]))), "utf-8"
    )


def use_recordings(sources=(), fetched=()):
    """Fetch recorded example output; return the local copies to use, saying what of them is used.

    The recordings committed in ``conf/recordings/`` come first, then *sources*
    (``make html OUTPUTS=...``), then *fetched*, (source, local copy) pairs;
    for the same example a later one wins (extensions/recordings.py).
    """
    labels = {}
    mine = [Path(path).relative_to(ROOT).as_posix() for path in committed()]
    for source in [*mine, *sources]:
        try:
            labels[str(fetch(str(ROOT / source) if source in mine else source, BUILD / "recordings"))] = (
                source
            )
        except OutputsError as err:
            print(f"--- recording not used: {err} ---", flush=True)
    labels.update((str(copy), source) for source, copy in fetched)
    for line in choose(list(labels), EXAMPLES, labels=labels)[1]:
        print(f"--- {line} ---", flush=True)
    return list(labels)


def build_local(langs, outputs=(), recordings=None):
    """Build *langs* (default: all) into _build/html/<lang>/ plus the root index; False if one failed.

    *outputs* are recordings (files or URLs) of executed examples to use; *recordings*,
    what use_recordings() already made of them (make pdf's pages, rebuilt to link a copy).
    """
    langs = select(langs)
    outdir, stamps = BUILD / "html", BUILD / "stamps"
    stamps.mkdir(parents=True, exist_ok=True)
    recordings = use_recordings(outputs) if recordings is None else recordings
    sources = {lang.sphinx: language_digest(lang.sphinx) for lang in LANGUAGES}
    # The pages link the offline copies built (make pdf, make epub): a new one rewrites them.
    digests = {lang: input_digest(lang, recordings, sources[lang] + linked_copies(lang)) for lang in sources}

    def stamped(lang, kind, value):
        return (stamps / f"{lang}.{kind}").is_file() and (stamps / f"{lang}.{kind}").read_text() == value

    current = {
        lang for lang in sources if (outdir / lang).is_dir() and stamped(lang, "sha256", digests[lang])
    }
    # The languages whose every page exists once this build is done: each page's
    # switcher links them, the others only where their page exists (language_switcher.py).
    complete = ",".join(sorted(current | set(langs)))
    todo = []
    for lang in langs:
        if GALLERY.is_dir() and lang in current and stamped(lang, "languages", complete):
            print(f"--- {lang}: nothing changed since the last build ---")
        else:
            (stamps / f"{lang}.sha256").unlink(missing_ok=True)
            todo.append(lang)
    check_catalogs(todo, {"syntax"})  # the others' catalogs passed at their last build
    options = ["-D", f"site_languages_built={complete}", "-D", f"site_html_root={outdir}"]
    if todo:
        warm_up(todo)
    failed, extracted = [], False
    checked = in_child(refused, todo, CONTENT_CHECKS)  # make check's content checks, while Sphinx builds

    @functools.cache
    def refusals():
        bad, problems = checked()
        for problem in problems:
            print(problem, file=sys.stderr)
        return bad

    for lang in todo:
        if failed and stale_examples():
            print(f"--- {lang}: not built: the examples did not all run (see above) ---", flush=True)
            failed.append(lang)
            continue
        if lang != SOURCE.sphinx and not extracted:
            announce("the extraction of the English")
            extract_english()
            extracted = True
        announce(lang)
        start = time.monotonic()
        fresh = not stamped(lang, "languages", complete)  # the switchers' links change: every page anew
        doctrees = BUILD / "doctrees" / lang
        if not build_atomically(
            lang, outdir / lang, doctrees, recordings, options, lambda: lang not in refusals(), fresh
        ):
            failed.append(lang)
            continue
        for kind, value in {"sha256": digests[lang], "languages": complete, "sources": sources[lang]}.items():
            (stamps / f"{lang}.{kind}").write_text(value)
        page = os.path.relpath(outdir / lang / "index.html")
        print(f"--- {lang}: published in {time.monotonic() - start:.0f} s: {page} ---", flush=True)
    bad = refusals()
    if bad:
        print(
            f'`make check LANGUAGES="{" ".join(bad)}"` lists the errors that kept them from being published'
        )
    if failed:
        return False
    write_root_index(outdir)
    return True


def announce(who):
    """Say how many examples *who*, the next Sphinx run, executes."""
    stale = stale_examples()
    print(f"--- {who} executes {len(stale)} example(s)" + (f": {', '.join(stale)}" if stale else "") + " ---")


def readthedocs_recordings():
    """The recordings to use on Read the Docs: the committed ones and the one that
    ``DP_OUTPUTS_URL`` (URLs, "{commit}" for this build's) names for this commit, if any."""
    templates = os.environ.get("DP_OUTPUTS_URL", "")
    found = None
    if templates:
        try:
            found = published(
                templates, os.environ.get("READTHEDOCS_GIT_COMMIT_HASH", "unknown"), BUILD / "recordings"
            )
        except OutputsError as err:
            print(f"--- recording not used: {err} ---", flush=True)
        if found is None:
            print("--- no published recording for this commit ---", flush=True)
    return use_recordings(fetched=[found] if found else [])


def readthedocs_target():
    """Return this Read the Docs build's Sphinx language and output folder; ValueError if none."""
    try:
        return from_readthedocs(os.environ["READTHEDOCS_LANGUAGE"]), Path(
            os.environ["READTHEDOCS_OUTPUT"]
        ).resolve()
    except KeyError as missing:
        raise ValueError(f"{missing} is not set; is this Read the Docs?") from None


def build_readthedocs():
    """Build this Read the Docs project's language into $READTHEDOCS_OUTPUT/html; False if it failed."""
    if os.environ.get("READTHEDOCS_VERSION_TYPE") == "external":
        return build_pull_request(Path(os.environ["READTHEDOCS_OUTPUT"]).resolve())
    lang, output = readthedocs_target()
    check_catalogs([lang], {"syntax"} | CONTENT_CHECKS)
    if lang != SOURCE.sphinx:
        extract_english()
    recordings = readthedocs_recordings()
    output.mkdir(parents=True, exist_ok=True)
    return build_atomically(lang, output / "html", BUILD / "doctrees" / f"rtd-{lang}", recordings)


def build_pull_request(output):
    """Build every language and the review page (build/review_page.py) into one pull-request preview.

    Read the Docs builds a pull request only in the project it belongs to (the
    English one) and clones it shallowly, without the branch it targets.
    """
    try:
        if git("rev-parse", "--is-shallow-repository").strip() == "true":
            git("fetch", "--quiet", "--unshallow", "origin")
        git("fetch", "--quiet", "origin", "+refs/heads/main:refs/remotes/origin/main")
        base = resolve_base()
    except ReviewError as err:
        raise BuildError(f"cannot find the commit this pull request is based on: {err}") from None
    os.environ.pop("READTHEDOCS_VERSION", None)  # links between languages as locally
    os.environ["BASE"] = base[0]  # the glossary words interface strings may add: the base's
    if not build_local([]):
        return False
    site = output / "html"
    shutil.rmtree(site, ignore_errors=True)
    shutil.copytree(BUILD / "html", site, symlinks=True)
    write_review(base, TRANSLATIONS, LOCALE, site, BUILD / "doctrees" / SOURCE.sphinx, site / "review")
    print((site / "review" / "summary.md").read_text("utf-8"))
    return True


def run(what, work):
    """The exit code of ``work()`` (True: built), run holding the checkout's build lock.

    0 built, 1 a check or a build failed, 2 bad usage, 130 interrupted.
    """
    try:
        with held(ROOT, os.environ.get("DP_COMMAND") or what):
            return 0 if work() else 1
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except BuildError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def outputs_option(parser):
    """The ``--outputs`` option of ``make html``, ``pdf`` and ``epub``."""
    parser.add_argument("--outputs", nargs="+", default=[], metavar="FILE_OR_URL", help="recordings to use")


def main(argv=None):
    """``python -m build.site html [LANG ...]`` or ``readthedocs``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["html", "readthedocs"])
    parser.add_argument("languages", nargs="*", help="default: every language of conf/languages.py")
    outputs_option(parser)
    args = parser.parse_args(argv)
    if args.mode == "readthedocs":
        return run("python -m build.site readthedocs", build_readthedocs)
    return run("python -m build.site html", lambda: build_local(args.languages, args.outputs))


if __name__ == "__main__":
    sys.exit(main())
