"""Benchmark the site build and the live preview (make bench).

Every build scenario runs REPEAT times (default 3) in a scratch copy of the
project, so the working tree's _build/ is left alone. Prints a table of median
wall times, their ratio to the fresh three-language build, how many examples
each build executed, and the peak resident memory of the largest build
process. Then it starts the live preview of zh_TW in that copy and saves an
edited tutorial paragraph EDITS times (default 5): how long until the served
page shows the edit, and until the rebuild is done (when open pages reload).

Usage: python tools/bench.py [--repeat N] [--edits N] [--only builds|preview]
Exit codes: 0 done, 1 a build failed.
"""

import argparse
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conf"))  # conf/: languages and the packages
from checkout_lock import outside_env  # noqa: E402
from site_layout import ROOT, copy_project  # noqa: E402
from catalogs.po import is_translated, messages, read, write  # noqa: E402

EXAMPLE = "examples/plot_01_dataparallel.py"
PO = "locale/zh_TW/LC_MESSAGES/auto_examples/plot_01_dataparallel.po"
# Runs a command and reports its peak RSS (the largest waited-for descendant).
MEASURE = (
    "import json, resource, subprocess, sys;"
    "rc = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT).returncode;"
    "print(json.dumps({'rc': rc, 'kib': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))"
)


def build(project, langs):
    """Run `make html` for *langs*; return (seconds, examples executed, peak MiB)."""
    log = project / "_build" / "bench.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    cmd = ["bash", "-c", f'make --no-print-directory html LANGUAGES="{langs}" > {log} 2>&1']
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-c", MEASURE, *cmd], cwd=project, capture_output=True, text=True
    )
    seconds = time.perf_counter() - start
    report = json.loads(result.stdout)
    text = log.read_text("utf-8", errors="replace")
    if report["rc"] != 0:
        sys.exit(f"build failed in {project}:\n{text[-3000:]}")
    executed = sum(int(n) for n in re.findall(r"^--- \S+ executes (\d+) example", text, re.M))
    return seconds, executed, report["kib"] / 1024


def longest_translated(catalog):
    """The translated entry with the longest English: a paragraph, as translators edit."""
    return max((m for m in messages(catalog) if is_translated(m)), key=lambda m: len(m.id))


def clean(project):
    """Remove everything a build generates (the Makefile keeps that list)."""
    subprocess.run(
        ["make", "--no-print-directory", "clean"], cwd=project, check=True, stdout=subprocess.DEVNULL
    )


def toggle(project, path, one, other):
    """Swap *one* and *other* in a file of the project, whichever is there."""
    file = project / path
    text = file.read_text("utf-8")
    old, new = (one, other) if one in text else (other, one)
    assert old in text, f"neither {one!r} nor {other!r} in {path}"
    file.write_text(text.replace(old, new, 1), "utf-8")


def scenarios(project):
    """Yield (name, prepare, languages); prepare() readies the tree for one run."""
    all_langs = "en zh_CN zh_TW"
    # In this order every round starts clean and leaves a full site for the
    # scenarios after the two fresh builds.
    yield "fresh build, English only", lambda: clean(project), "en"
    yield "fresh build, 3 languages", lambda: clean(project), all_langs
    yield "no-change rebuild", lambda: None, all_langs

    def edit_po():
        catalog = read(project / PO)
        # A paragraph, as translators usually edit (a title would rewrite every page).
        entry = longest_translated(catalog)
        entry.string = entry.string[:-1] if entry.string.endswith(" ") else entry.string + " "
        write(catalog, project / PO)

    yield "one zh_TW .po entry edited", edit_po, all_langs
    prose = ("deliberately tiny", "deliberately very tiny")
    yield "example prose edited", lambda: toggle(project, EXAMPLE, *prose), all_langs
    code = ("batch_size = 30\n", "batch_size = 30  # rows per batch\n")
    yield "example code edited", lambda: toggle(project, EXAMPLE, *code), all_langs


def fetch(url):
    """Return the page at *url*, or "" while the server is not there yet."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.read().decode("utf-8")
    except OSError:
        return ""


def preview_latency(project, edits):
    """Time saved tutorial edits in `make livehtml LANGUAGE=zh_TW`: (page, rebuild) seconds."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base = f"http://127.0.0.1:{port}/"
    page_url = base + "zh_TW/" + EXAMPLE.replace("examples/", "auto_examples/")[:-3] + ".html"
    env = outside_env()
    log = open(project / "_build" / "preview.log", "w")
    preview = subprocess.Popen(
        ["make", "--no-print-directory", "livehtml", "LANGUAGE=zh_TW", f"PORT={port}"],
        cwd=project,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    timings = []
    try:
        while "</html>" not in fetch(page_url):
            if preview.poll() is not None:
                sys.exit(f"the preview stopped:\n{(project / '_build/preview.log').read_text()}")
            time.sleep(0.2)
        for edit in range(edits):
            time.sleep(1)  # a translator pauses between saves
            build = json.loads(fetch(base + "_live/status"))["build"]
            catalog = read(project / PO)
            entry = longest_translated(catalog)
            marker = f"（第 {edit + 1} 次修改）"
            entry.string = re.sub(r"（第 \d+ 次修改）$", "", entry.string) + marker
            saved = time.perf_counter()
            write(catalog, project / PO)
            while marker not in fetch(page_url):
                time.sleep(0.02)
            shown = time.perf_counter() - saved
            while json.loads(fetch(base + "_live/status"))["build"] == build:
                time.sleep(0.02)
            timings.append((shown, time.perf_counter() - saved))
            print(
                f"  preview edit {edit + 1}: page {shown:.2f} s, rebuild done {timings[-1][1]:.2f} s",
                file=sys.stderr,
                flush=True,
            )
    finally:
        # SIGTERM: the preview stops as on Ctrl-C; SIGINT is ignored where this
        # benchmark was started in the background (`make bench &`).
        os.killpg(preview.pid, signal.SIGTERM)
        preview.wait()
        log.close()
    return timings


def main(argv=None):
    """Run every scenario, then print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--edits", type=int, default=5)
    parser.add_argument("--only", choices=["builds", "preview"])
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="dp-bench-") as tmp:
        project = copy_project(Path(tmp) / "project", with_gallery=False)
        if args.only != "preview":
            print_builds(time_builds(project, args.repeat), args.repeat)
        else:
            build(project, "zh_TW")
        if args.only != "builds":
            print_preview(preview_latency(project, args.edits))
    return 0


def time_builds(project, repeat):
    """Run every build scenario *repeat* times; return [(name, [runs])] in table order."""
    plan = list(scenarios(project))
    runs = {name: [] for name, _, _ in plan}
    # Round by round, so that the machine's drift hits every scenario alike.
    for _ in range(repeat):
        for name, prepare, langs in plan:
            prepare()
            runs[name].append(build(project, langs))
            print(f"  {name}: {runs[name][-1][0]:.1f} s", file=sys.stderr, flush=True)
    order = [plan[1][0], plan[0][0]] + [name for name, _, _ in plan[2:]]
    return [(name, runs[name]) for name in order]


def print_builds(rows, repeat):
    """Print the build scenarios' medians."""
    fresh = statistics.median(r[0] for r in rows[0][1])
    print(f"\n{'scenario':<30} {'median s':>9} {'x fresh':>8} {'examples run':>13} {'peak MiB':>9}")
    for name, runs in rows:
        median = statistics.median(r[0] for r in runs)
        executed = "/".join(sorted({str(r[1]) for r in runs}))
        peak = max(r[2] for r in runs)
        print(f"{name:<30} {median:>9.1f} {median / fresh:>8.2f} {executed:>13} {peak:>9.0f}")
    total = len(list((ROOT / "examples").glob("*.py")))
    print(
        f"\n{repeat} runs each; 'examples run' counts executions per build "
        f"({total} examples in total); peak MiB is the largest single process."
    )


def print_preview(timings):
    """Print the live preview's medians."""
    pages, rebuilds = zip(*timings)
    print(f"\nlive preview (zh_TW), a tutorial paragraph saved {len(timings)} times:")
    print(
        f"  served page shows the edit: median {statistics.median(pages):.2f} s"
        f" (min {min(pages):.2f}, max {max(pages):.2f})"
    )
    print(
        f"  rebuild done, open pages reload: median {statistics.median(rebuilds):.2f} s"
        f" (min {min(rebuilds):.2f}, max {max(rebuilds):.2f})"
    )


if __name__ == "__main__":
    sys.exit(main())
