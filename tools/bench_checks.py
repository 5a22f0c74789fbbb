"""Benchmark the translation checks (make check) on about 1 MB of catalogs.

By default the catalogs are this project's zh_CN and zh_TW ones, copied until
they weigh --megabytes (default 1), each copy's texts made distinct (a tag
at the end of every msgid and msgstr) so that no parse is answered from a
cache. Their .pot templates are written beside them, so every check runs,
``out-of-sync`` included, without Sphinx's gettext builder (whose time
depends on the sources, not on the catalogs). ``--locale-dir DIR LANG...``
times other catalogs instead (of another project: their templates are not
here, so out-of-sync is left out).

Each run is a fresh ``python -m gate.run_checks`` process, as ``make check``
starts one. Prints the size, the entries, the median, the
fastest and the slowest wall time of --repeat runs (default 5), the median
CPU time (the wall time of an idle machine) and the load average.

Usage: python tools/bench_checks.py [--repeat N] [--megabytes M]
       python tools/bench_checks.py --locale-dir DIR LANG...
Exit codes: 0 done, 1 a run crashed (exit code 2 or more).
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CONF = Path(__file__).resolve().parents[1] / "conf"
sys.path.insert(0, str(CONF))  # the machinery's packages, as make puts conf/ on PYTHONPATH
from site_layout import ROOT  # noqa: E402
from catalogs.po import Catalog, is_translated, messages, read, write  # noqa: E402

GATE = [sys.executable, "-m", "gate.run_checks"]
LANGS = ("zh_CN", "zh_TW")
# What another project's catalogs are checked for (no templates: out-of-sync is left out).
FOREIGN = ("syntax", "markup", "references", "unused", "script-mix", "terminology", "safety", "code")


def make_catalogs(out, megabytes):
    """Copy this project's catalogs into *out* up to *megabytes*; return their .pot folder."""
    pots = out / "pot"
    copy, size = 0, 0
    while size < megabytes * 1_000_000:
        copy += 1
        for lang in LANGS:
            for po_path in sorted((ROOT / "locale" / lang / "LC_MESSAGES").rglob("*.po")):
                name = po_path.relative_to(ROOT / "locale" / lang / "LC_MESSAGES")
                source = read(po_path)
                catalog, template = Catalog(locale=lang), Catalog()
                for message in messages(source):
                    string = f"{message.string} v{copy}" if message.string else ""
                    catalog.add(f"{message.id} v{copy}", string, message.locations, message.flags)
                    template.add(f"{message.id} v{copy}", "", message.locations)
                target = out / "locale" / lang / "LC_MESSAGES" / f"copy{copy}" / name
                write(catalog, target, lang)
                size += target.stat().st_size
                if lang == LANGS[0]:
                    write(template, pots / f"copy{copy}" / name.with_suffix(".pot"))
    return pots


def time_runs(args, repeat):
    """Run the gate *repeat* times with *args*; return [(wall, CPU seconds)]."""
    times = []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        env = {**os.environ, "PYTHONPATH": str(CONF)}
        result = subprocess.run([*GATE, *args], capture_output=True, text=True, env=env)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        times.append((wall, cpu))
        if result.returncode > 1:
            sys.exit(f"the checks crashed:\n{result.stderr[-3000:]}")
    return times


def main(argv=None):
    """Build or read the catalogs, time the checks, print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("languages", nargs="*", metavar="LANG")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--megabytes", type=float, default=1.0)
    parser.add_argument("--locale-dir", type=Path, help="time these catalogs instead")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-checks-") as tmp:
        if args.locale_dir:
            locale, langs = args.locale_dir, args.languages or list(LANGS)
            checks = [f"--check={check}" for check in FOREIGN]
            gate_args = [*checks, "--strict=0", "--locale-dir", str(locale), *langs]
        else:
            locale, langs = Path(tmp) / "locale", list(LANGS)
            pots = make_catalogs(Path(tmp), args.megabytes)
            gate_args = ["--strict=0", "--locale-dir", str(locale), "--pot-dir", str(pots), *langs]
        catalogs = [p for lang in langs for p in (locale / lang / "LC_MESSAGES").rglob("*.po")]
        size = sum(p.stat().st_size for p in catalogs)
        entries = sum(sum(map(is_translated, messages(read(p)))) for p in catalogs)
        times = time_runs(gate_args, args.repeat)
    print(
        f"{len(catalogs)} catalogs, {size / 1e6:.2f} MB, {entries} translated entries; "
        f"{args.repeat} runs of make check's checks:"
    )
    walls = [wall for wall, _ in times]
    print(
        f"median {statistics.median(walls):.2f} s (fastest {min(walls):.2f} s, slowest "
        f"{max(walls):.2f} s); CPU time median {statistics.median(c for _, c in times):.2f} s; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
