"""Build the HTML site, language by language, never leaving a half-built one.

Usage:
    python conf/build/site.py html [LANG ...]     local build into _build/html/<lang>/
    python conf/build/site.py readthedocs         one language, as Read the Docs asks
                                                        (a pull request: all, and the review)

Each language is built into a staging copy of its last good output and swapped
in only when Sphinx succeeds, so a failed or interrupted build leaves the
previous site in place. A catalog gettext would reject stops the build before
any Sphinx run; a translation that breaks its page (make check's content
checks, run while the languages build) keeps its language from being
published. Examples execute once: the first language is built alone, and
Sphinx-Gallery executes the examples whose source changed since they last
ran; the others are then built side by side with ``-D reuse_gallery=1``,
reading the gallery the first one generated without writing to it
(gallery_reuse.py). The whole run holds the checkout's build lock
(checkout_lock.py): a second build of the same checkout waits for it. A
language none of whose inputs (sources, its catalogs, the build machinery)
changed since its last good build is not rebuilt at all; when only conf/ or
the pins changed, Sphinx itself reads every page again (their digest is an
extension's ``env_version``).

Exit codes: 0 built, 1 a check or a build failed, 2 bad usage.
"""

import argparse
import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # conf/: languages and the packages
from languages import LANGUAGES, SOURCE, TRANSLATIONS, browser_tags, from_readthedocs, select  # noqa: E402
from checkout_lock import run_held  # noqa: E402
from content_security_policy import meta, policy, script_hash  # noqa: E402
from site_layout import BUILD, CONF, EXAMPLES, GALLERY, LOCALE, ROOT, language_digest  # noqa: E402
from build.outputs import OutputsError, fetch, published  # noqa: E402
from extensions.gallery_reuse import stale_examples  # noqa: E402
from extensions.recordings import choose, committed  # noqa: E402
from catalogs.diff import resolve_base  # noqa: E402
from catalogs.merge import ExtractionError, fresh_templates  # noqa: E402
from catalogs.repository import ReviewError, git  # noqa: E402
from build.review_page import write_review  # noqa: E402
from gate.run_checks import errors  # noqa: E402

# Reuse the gallery the first language's build executed (gallery_reuse.py).
REUSE_GALLERY = ["-D", "reuse_gallery=1"]
SPHINX_OPTS = os.environ.get("SPHINXOPTS", "-W --keep-going").split()
# Sphinx's progress lines, three languages at once, bury what matters: by
# default it prints only warnings and errors, and this script says what it
# builds, what it executes and where the pages are. VERBOSE=1 shows it all.
QUIET = [] if os.environ.get("VERBOSE", "") not in ("", "0") else ["-q"]


# What stops a translation from being published: a catalog gettext would reject
# (checked before anything is built), and translations that break their page
# (make check's content checks, run while the languages build). Out-of-date
# catalogs and unfinished entries are published: their English shows.
CONTENT_CHECKS = {"markup", "safety", "interface", "code", "script-mix"}


def refused(langs, checks):
    """Return the translations among *langs* whose catalogs fail *checks*, printing why.

    Only errors refuse a translation: a warning (often a fine translation) is
    left to ``make check``. Each error is printed as ``file:line: [check] message``.
    """
    translations = [lang for lang in langs if lang != SOURCE.sphinx]
    if not translations:
        return []
    problems = errors(translations, LOCALE, checks)
    for problem in problems:
        print(problem, file=sys.stderr, flush=True)
    return sorted(
        {
            lang
            for lang in translations
            for p in problems
            if Path(p.path).resolve().is_relative_to(LOCALE / lang)
        }
    )


def extract_english(reuse_gallery=False):
    """Extract the current English (make gettext), which the translations are counted against.

    The status page and each page's notice count a translation against the
    current English, as ``make stat`` does (catalogs/merge.py): the
    templates must be current before a translation builds. Nothing runs when
    no source changed since the last extraction. *reuse_gallery*: read the
    gallery the first language generated, as the other languages do. Returns
    False on failure.
    """
    try:
        ran, said = fresh_templates(options=REUSE_GALLERY if reuse_gallery else ())
    except ExtractionError as err:
        print(f"{err}\nerror: extracting the English failed (above); nothing was built", file=sys.stderr)
        return False
    if said.strip():
        print(said.rstrip(), flush=True)
    return True


def input_digest(lang, sources=None):
    """Hash everything a language's pages are made from: its sources (their digest, if
    known: *sources*), Sphinx's options, the recordings."""
    digest = hashlib.sha256(" ".join(SPHINX_OPTS).encode())
    digest.update(" ".join(RECORDINGS).encode())  # named by their checksums (outputs.fetch)
    digest.update((sources or language_digest(lang)).encode())
    return digest.hexdigest()


def sphinx_build(lang, outdir, doctrees, log=None, options=(), builder="html"):
    """Run sphinx-build for *lang*, its output to *log* if given; return its exit code."""
    cmd = [
        sys.executable,
        "-m",
        "sphinx",
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
        *options,
        *(["-D", f"recordings={','.join(RECORDINGS)}"] if RECORDINGS else []),
        str(ROOT / "docs"),
        str(outdir),
    ]
    sys.stdout.write(f"--- building {lang} ({builder}) ---\n")  # one write: builds run in threads
    sys.stdout.flush()
    if log is None:
        return subprocess.run(cmd, cwd=ROOT).returncode
    with open(log, "w", encoding="utf-8") as out:
        code = subprocess.run(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT).returncode
    said = Path(log).read_text("utf-8")
    if said.strip():
        print(f"--- {lang} ---\n" + said, end="", flush=True)
    return code


def build_atomically(lang, final, doctrees, log=None, options=(), publishable=lambda: True, fresh=False):
    """Build *lang* into a staging copy of *final* and swap it in on success.

    ``publishable()`` is asked after Sphinx succeeded; False keeps the last good site.
    *fresh*: into an empty staging folder, so that Sphinx writes every page
    (from its environment: nothing is read again).
    """
    staging = final.with_name(f".{final.name}.staging")
    old = final.with_name(f".{final.name}.old")
    for leftover in (staging, old):
        shutil.rmtree(leftover, ignore_errors=True)
    if final.is_dir() and not fresh:
        shutil.copytree(final, staging, symlinks=True)  # keeps mtimes: incremental
    built = sphinx_build(lang, staging, doctrees, log, options) == 0
    if not (built and publishable()):
        shutil.rmtree(staging, ignore_errors=True)
        # The environment may say pages are current that were never published.
        (doctrees / "environment.pickle").unlink(missing_ok=True)
        why = "build failed" if not built else "catalogs have the problems listed above"
        print(f"error: {lang} not published ({why}); {final} was left as it was", file=sys.stderr)
        return False
    if final.exists():
        final.rename(old)
    staging.rename(final)
    shutil.rmtree(old, ignore_errors=True)
    return True


def write_root_index(outdir):
    """Write the page that sends a visitor to the language their browser prefers.

    Only to the languages built so far (``make html LANGUAGES=en`` on a fresh
    clone has no Chinese site to send anyone to).
    """
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
        ((tag, lang.sphinx) for lang in built for tag in browser_tags(lang)), key=lambda route: -len(route[0])
    )
    fallback = SOURCE if SOURCE in built else built[0]
    page = (
        template.replace("{{ links }}", links)
        .replace("{{ choose }}", choose)
        .replace("{{ routes }}", json.dumps(routes))
        .replace("{{ fallback }}", json.dumps(fallback.sphinx))
    )
    script = re.search(r"<script>(.*?)</script>", page, re.S)[1]
    page = page.replace("{{ policy }}", meta(policy([script_hash(script)])))
    (outdir / "index.html").write_text(page, "utf-8")


# The recordings this build's Sphinx runs are given (-D recordings=...).
RECORDINGS = []


def use_recordings(sources=(), fetched=()):
    """Fetch recorded example output and say what of it is used.

    The recordings committed in ``conf/recordings/`` come first, then
    *sources* (``make html OUTPUTS=...``), then *fetched*, (source, local
    copy) pairs already downloaded; a later one wins for the same example. A
    recording that cannot be read, is not signed by a trusted key, or does
    not match an example's code is not used, saying why in one line; that
    example's page shows this build's own output (recordings.py).
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
    RECORDINGS[:] = labels
    _, report = choose(list(labels), EXAMPLES, labels=labels)
    for line in report:
        print(f"--- {line} ---", flush=True)


def build_local(langs, outputs=()):
    """Build *langs* (default: all) into _build/html/<lang>/ plus the root index.

    *outputs* are recordings (files or URLs) of executed examples to use.
    """
    langs = select(langs)
    outdir = BUILD / "html"
    outdir.mkdir(parents=True, exist_ok=True)
    stamps = BUILD / "stamps"
    stamps.mkdir(parents=True, exist_ok=True)
    use_recordings(outputs)
    sources = {lang.sphinx: language_digest(lang.sphinx) for lang in LANGUAGES}
    digests = {lang: input_digest(lang, sources[lang]) for lang in sources}

    def current(lang):
        stamp = stamps / f"{lang}.sha256"
        return (outdir / lang).is_dir() and stamp.is_file() and stamp.read_text() == digests[lang]

    # The languages whose every page exists once this build is done: each page's
    # switcher links them; the others only where their page exists (language_switcher.py).
    complete = ",".join(sorted({lang.sphinx for lang in LANGUAGES if current(lang.sphinx)} | set(langs)))

    def links_current(lang):
        """Whether *lang*'s pages were written when the same languages were complete."""
        linked = stamps / f"{lang}.languages"
        return linked.is_file() and linked.read_text() == complete

    todo = []
    for lang in langs:
        stamp = stamps / f"{lang}.sha256"
        # The executed gallery too: `make pdf`/`epub` and the preview read it.
        if GALLERY.is_dir() and current(lang) and links_current(lang):
            print(f"--- {lang}: nothing changed since the last build ---")
            continue
        stamp.unlink(missing_ok=True)
        todo.append((lang, stamp, digests[lang]))
    # Only what will be rebuilt: the others' catalogs passed at their last build.
    broken = refused([lang for lang, _, _ in todo], {"syntax"})
    if broken:
        print(
            f"error: the catalogs of {', '.join(broken)} cannot be read (see above); nothing was built",
            file=sys.stderr,
        )
        return 1

    building = ["-D", f"site_building={complete}", "-D", f"site_published_root={outdir}"]

    def build(lang, stamp, digest, log=None, options=()):
        start = time.monotonic()
        ok = build_atomically(
            lang,
            outdir / lang,
            BUILD / "doctrees" / lang,
            log,
            [*options, *building],
            publishable=lambda: lang not in checked.result(),
            # The languages every switcher links changed: all pages are written anew.
            fresh=not links_current(lang),
        )
        if ok:
            stamp.write_text(digest)
            (stamps / f"{lang}.languages").write_text(complete)
            (stamps / f"{lang}.sources").write_text(sources[lang])
            page = os.path.relpath(outdir / lang / "index.html")
            print(f"--- {lang}: published in {time.monotonic() - start:.0f} s: {page} ---", flush=True)
        return ok

    if not todo:
        write_root_index(outdir)
        return 0
    # The first language executes the changed examples; the others then reuse
    # its gallery, side by side, each logging to its own file.
    changed = stale_examples(EXAMPLES, GALLERY)
    translations = [lang for lang, _, _ in todo if lang != SOURCE.sphinx]
    # The English the translations are counted against is extracted before
    # they build: after the English build, reusing its gallery, or, without
    # one, first, executing the changed examples itself.
    extract_first = bool(translations) and todo[0][0] != SOURCE.sphinx
    first = "the extraction of the English" if extract_first else todo[0][0]
    said = f"--- {first} executes {len(changed)} example(s)"
    said += f": {', '.join(changed)}" if changed else ""
    said += (
        "; the languages reuse its results"
        if extract_first
        else ("; the other languages reuse its results" if len(todo) > 1 else "")
    )
    print(said + " ---", flush=True)
    if extract_first and not extract_english():
        return 1
    # The others reuse the first one's gallery: they start as soon as it is
    # complete (gallery_reuse.announce_gallery), while the first one still
    # reads and writes its own pages.
    ready = stamps / "gallery.ready"
    ready.unlink(missing_ok=True)
    overlap = len(todo) > 1 and not extract_first
    with ThreadPoolExecutor(max_workers=len(todo)) as pool:
        checked = pool.submit(refused, [lang for lang, _, _ in todo], CONTENT_CHECKS)
        first_build = pool.submit(build, *todo[0], None, ["-D", f"gallery_ready={ready}"] if overlap else [])
        if overlap:
            while not ready.exists() and not first_build.done():
                time.sleep(0.1)
        gallery = ready.exists() if overlap else first_build.result()
        extracted = gallery and (not translations or extract_first or extract_english(reuse_gallery=True))
        jobs = []
        if extracted:
            jobs = [pool.submit(build, *job, stamps / f"{job[0]}.log", REUSE_GALLERY) for job in todo[1:]]
        elif not gallery:
            for lang, _, _ in todo[1:]:  # they keep their last good site
                print(
                    f"--- {lang} ---\nnot built: the first language's build failed before its examples ran",
                    flush=True,
                )
        results = [first_build.result(), extracted, *(job.result() for job in jobs)]
    if checked.result():
        print(
            f'`make check LANGUAGES="{" ".join(checked.result())}"` lists the problems'
            " that kept them from being published",
            file=sys.stderr,
        )
    if not all(results):
        return 1
    write_root_index(outdir)
    return 0


def readthedocs_recordings():
    """Use the recording that DP_OUTPUTS_URL names for this commit, if one is published.

    DP_OUTPUTS_URL: where the GPU workflow publishes recordings, "{commit}"
    for this build's commit; several URLs are tried in turn.
    """
    templates = os.environ.get("DP_OUTPUTS_URL", "")
    if not templates:
        use_recordings()  # the committed ones
        return
    commit = os.environ.get("READTHEDOCS_GIT_COMMIT_HASH", "unknown")
    try:
        found = published(templates, commit, BUILD / "recordings")
    except OutputsError as err:
        print(f"--- recording not used: {err} ---", flush=True)
        found = None
    if found is None:
        print("--- no published recording for this commit ---", flush=True)
    use_recordings(fetched=[found] if found else [])


def readthedocs_target():
    """Return this Read the Docs build's Sphinx language and output folder; ValueError if none."""
    try:
        lang = from_readthedocs(os.environ["READTHEDOCS_LANGUAGE"])
        return lang, Path(os.environ["READTHEDOCS_OUTPUT"]).resolve()
    except KeyError as missing:
        raise ValueError(f"{missing} is not set; is this Read the Docs?") from None


def build_readthedocs():
    """Build the language of this Read the Docs project into $READTHEDOCS_OUTPUT/html."""
    if os.environ.get("READTHEDOCS_VERSION_TYPE") == "external":
        return build_pull_request(Path(os.environ["READTHEDOCS_OUTPUT"]).resolve())
    try:
        lang, output = readthedocs_target()
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if refused([lang], {"syntax"} | CONTENT_CHECKS):
        return 1
    if lang != SOURCE.sphinx and not extract_english():
        return 1
    readthedocs_recordings()
    output.mkdir(parents=True, exist_ok=True)
    ok = build_atomically(lang, output / "html", BUILD / "doctrees" / f"rtd-{lang}")
    return 0 if ok else 1


# -- Read the Docs pull-request previews ---------------------------------------


def pull_request_base(branch="main"):
    """Fetch *branch* (and the history a shallow clone lacks); return its merge base with HEAD.

    Read the Docs clones a pull request shallowly, without the branch it
    targets, so there is nothing to compare with until both are fetched.
    """
    if git("rev-parse", "--is-shallow-repository").strip() == "true":
        git("fetch", "--quiet", "--unshallow", "origin")
    git("fetch", "--quiet", "origin", f"+refs/heads/{branch}:refs/remotes/origin/{branch}")
    return resolve_base()


def build_pull_request(output):
    """Build every language and the review page into one pull-request preview.

    Read the Docs builds a pull request in the project it belongs to only (the
    English one), so one preview holds it all, laid out as locally: the root
    chooser, en/, zh_CN/, zh_TW/, and review/ (review_diff.py against the
    merge base with main).
    """
    try:
        base = pull_request_base()
    except ReviewError as err:
        print(f"error: cannot find the commit this pull request is based on: {err}", file=sys.stderr)
        return 1
    os.environ.pop("READTHEDOCS_VERSION", None)  # links between languages as locally
    os.environ["BASE"] = base[0]  # the glossary words interface strings may add: the base's
    if build_local([]) != 0:
        return 1
    site = output / "html"
    shutil.rmtree(site, ignore_errors=True)
    shutil.copytree(BUILD / "html", site, symlinks=True)
    write_review(base, TRANSLATIONS, LOCALE, site, BUILD / "doctrees" / SOURCE.sphinx, site / "review")
    print((site / "review" / "summary.md").read_text("utf-8"))
    return 0


def add_outputs_option(parser):
    """The ``--outputs`` option of ``make html``, ``pdf`` and ``epub``."""
    parser.add_argument(
        "--outputs",
        nargs="+",
        default=[],
        metavar="FILE_OR_URL",
        help="recorded example output to use (make outputs)",
    )


def main(argv=None):
    """Parse the command line and build."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["html", "readthedocs"])
    parser.add_argument("languages", nargs="*", help="default: every language of the table")
    add_outputs_option(parser)
    args = parser.parse_args(argv)
    if args.mode == "readthedocs":
        return run_held("build_site.py readthedocs", build_readthedocs)
    return run_held("build_site.py html", lambda: build_local(args.languages, args.outputs))


if __name__ == "__main__":
    sys.exit(main())
