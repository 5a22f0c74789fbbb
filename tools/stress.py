"""Run fresh site builds under CPU load and count the failures (make stress).

Each run copies the project into a scratch folder with nothing generated (no
``_build``, no executed gallery) and runs ``make html`` there, while LOAD busy
loops keep every core loaded, as on a shared CI machine or a Read the Docs
builder. With ``--copies M``, M copies build at the same time in each run, as
M clones building at once on one machine would. Timing bugs that
a quiet machine hides show up here; the tests force the known ones
deterministically (tests/test_build_reliability.py).

Usage: python tools/stress.py [--runs N] [--load K] [--copies M] [--languages "en zh_TW"]

Prints one line per build and a summary (builds, failures, median and
slowest time); the log of every failed build is kept and its path printed.

Exit codes: 0 every build succeeded, 1 at least one failed, 2 bad usage.
"""

import argparse
import multiprocessing
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conf"))  # conf/: languages and the packages
from site_layout import copy_project  # noqa: E402


def busy():
    """Keep one core busy until killed."""
    while True:
        pass


def fresh_build(folder, languages):
    """Copy the project into *folder*, build it from scratch; return (ok, seconds, log)."""
    project = copy_project(folder, with_gallery=False)
    log = folder / "build.log"
    start = time.perf_counter()
    with open(log, "w", encoding="utf-8") as out:
        code = subprocess.run(
            ["make", "--no-print-directory", "html", f"LANGUAGES={languages}"],
            cwd=project,
            stdout=out,
            stderr=subprocess.STDOUT,
        ).returncode
    return code == 0, time.perf_counter() - start, log


def main(argv=None):
    """Start the load, run the builds, print the summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--load", type=int, default=8, help="busy loops running meanwhile")
    parser.add_argument(
        "--copies", type=int, default=1, metavar="M", help="copies building at once in each run"
    )
    parser.add_argument("--languages", default="en zh_CN zh_TW")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.copies < 1 or args.load < 0:
        parser.error("--runs and --copies must be at least 1, --load at least 0")

    kept = Path(tempfile.mkdtemp(prefix="dp-stress-logs-"))
    loops = [multiprocessing.Process(target=busy, daemon=True) for _ in range(args.load)]
    for loop in loops:
        loop.start()
    results = []
    print(
        f"{args.runs} run(s) of {args.copies} fresh build(s) each, "
        f"{args.load} busy loop(s) meanwhile, languages: {args.languages}",
        flush=True,
    )
    try:
        for run in range(1, args.runs + 1):
            with tempfile.TemporaryDirectory(prefix="dp-stress-") as tmp:
                folders = [Path(tmp) / f"copy-{i}" for i in range(args.copies)]
                with ThreadPoolExecutor(max_workers=args.copies) as pool:
                    done = list(pool.map(lambda f: fresh_build(f, args.languages), folders))
                for copy, (ok, seconds, log) in enumerate(done, 1):
                    where = ""
                    if not ok:
                        saved = kept / f"run{run}-copy{copy}.log"
                        shutil.copy(log, saved)
                        where = f"  log: {saved}"
                    results.append((ok, seconds))
                    verdict = "ok" if ok else "FAILED"
                    print(f"run {run:>2} copy {copy}: {verdict:<6} {seconds:6.1f} s{where}", flush=True)
    finally:
        for loop in loops:
            loop.kill()
    failures = sum(1 for ok, _ in results if not ok)
    times = [seconds for _, seconds in results]
    print(
        f"\n{len(results)} builds, {failures} failed; median {statistics.median(times):.1f} s,"
        f" slowest {max(times):.1f} s"
    )
    if not failures:
        shutil.rmtree(kept, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
