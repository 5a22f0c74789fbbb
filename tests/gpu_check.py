"""The prepared GPU check: what a machine with GPUs must do that a CPU build cannot prove.

Usage:
    make gpu-check                      (or python tests/gpu_check.py [--out DIR] [--only NAME ...])

Runs, each under its own time limit, and writes one report
(``_build/gpu-check/report.md``, and ``report.json``):

1. ``machine``: PyTorch, CUDA, NCCL, the GPUs; it fails when ``nvidia-smi -L``
   lists GPUs that torch does not see (a CPU build of torch, a driver that
   CUDA cannot use): everything else would then pass "without a GPU";
2. ``site``: the three languages built as ``make html`` builds them (the
   examples executed in the build's one process, after plot_01 has used CUDA),
   in a step of its own, so that the tests below read a built site;
3. ``cuda_tests``: ``tests/test_dataparallel_emulation.py`` (real
   ``nn.DataParallel`` against the emulation), ``tests/test_ddp.py`` and
   ``tests/test_training.py`` (what the DDP, training and FSDP2 pages printed
   on this machine, with the headers this machine gives: NCCL on a GPU per
   process where there are enough GPUs; and each page under ``torchrun``);
4. every command the pages give a reader, with 1 and 2 processes, with as
   many processes as the machine has GPUs and with one more than that (which
   must fall back to the CPU and ``gloo``, saying so, and open no CUDA
   context: ``nvidia-smi --query-compute-apps`` is watched while it runs);
   every process's line says where it ran; plot_04 and plot_05 again, to
   resume from their checkpoints; plot_06 first with one process, which
   writes its seed checkpoint, then with each number, which trains from it;
5. ``notebook_NN``: each tutorial's notebook, executed in a kernel that has
   first called ``torch.cuda.is_available()`` and run a backward pass, as a
   reader's kernel may have: plot_01 and plot_02 must run to the end; the
   launchers of plot_03 to plot_06 must run too on a machine without GPUs,
   and refuse, saying so, on one with GPUs;
6. ``outputs``: ``make outputs`` with a throwaway key, whose recording is then
   verified and its result headers listed.

Each step says what it expected of this machine. The report and the last
lines printed name what this run could not prove (on a CPU machine, nothing
about CUDA; on one GPU, nothing about NCCL between GPUs ...). Steps that need
the Sphinx stack are reported as skipped where it is not installed.

Exit codes: 0 every step passed, 1 a step failed, 2 bad usage.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("PYTHONPATH", str(ROOT / "conf"))  # `python -m build.site`, as make runs it
EXAMPLES = ROOT / "examples"
LIMIT = 300  # seconds a reader's command may take
SITE_LIMIT = 2400  # the three languages from nothing, on a fresh runner
TESTS_LIMIT = 1500  # the CUDA tests, the site built
NOTEBOOK_LIMIT = 900
TAIL = 1500  # characters of a step's output kept in the report
PAGES = {
    "01": "plot_01_dataparallel",
    "02": "plot_02_dataparallel_in_depth",
    "03": "plot_03_distributed_data_parallel",
    "04": "plot_04_train_with_ddp",
    "05": "plot_05_fsdp2",
    "06": "plot_06_fsdp2_at_scale",
}
# What one run cannot prove, by the number of GPUs it had.
OUT_OF_REACH = (
    "several machines (each decides on its own LOCAL_WORLD_SIZE; a checkpoint folder"
    " they share), MIG, /dev/shm limits in containers, bfloat16 on GPUs older than"
    " Ampere, Windows"
)


def facts():
    """What this machine has, as the examples see it."""
    import torch

    gpus = torch.cuda.device_count()
    nccl = None
    if gpus and torch.distributed.is_nccl_available():
        nccl = ".".join(map(str, torch.cuda.nccl.version()))
    return {
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "nccl": nccl,
        "gpus": [torch.cuda.get_device_name(i) for i in range(gpus)],
    }


def unproven(gpus):
    """What a run on a machine with *gpus* GPUs cannot prove, each in a line."""
    if not gpus:
        return [
            "anything about CUDA: no GPU, so every process ran on the CPU with gloo, no"
            " notebook met the GPU refusal, no page measured GPU memory, and the real"
            " nn.DataParallel ran nowhere",
            OUT_OF_REACH,
        ]
    lines = []
    if gpus == 1:
        lines.append(
            "NCCL between GPUs: every NCCL group here had one rank, so no all-reduce,"
            " all-gather, reduce-scatter or broadcast crossed GPUs; FSDP2 sharding across"
            " GPUs, DCP saving and resuming on several GPUs, broadcast_from_rank0 between"
            " GPUs and clip_grad_norm_'s reduction across GPUs ran only on the CPU"
            " (gloo)"
        )
    if gpus < 8:
        lines.append(
            f"nn.DataParallel on {'2, 3 and 8' if gpus < 2 else '3 and 8' if gpus < 3 else '8'}"
            f" GPUs (emulated here), and every result of more than {gpus} process(es),"
            " which ran on the CPU"
        )
    return lines + [OUT_OF_REACH]


def visible_count(listed):
    """How many of the *listed* GPUs CUDA_VISIBLE_DEVICES lets a process see."""
    value = os.environ.get("CUDA_VISIBLE_DEVICES")
    if value is None:
        return listed
    return min(listed, len([entry for entry in value.split(",") if entry.strip()]))


def nvidia_smi(*args):
    """What ``nvidia-smi ARGS`` prints, or None where there is none (or it fails)."""
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        done = subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def machine(found):
    """(passed, summary): torch must see the GPUs nvidia-smi lists (as CUDA_VISIBLE_DEVICES allows)."""
    listed = nvidia_smi("-L")
    seen = len(found["gpus"])
    if listed is None:
        return True, f"no nvidia-smi here; torch sees {seen} GPU(s)"
    gpus = len([line for line in listed.splitlines() if line.startswith("GPU ")])
    expected = visible_count(gpus)
    if seen < expected:
        why = (
            "torch is a build without CUDA" if found["cuda"] is None else "the driver or CUDA cannot use them"
        )
        return False, (
            f"nvidia-smi lists {gpus} GPU(s) ({expected} visible), torch sees {seen}:"
            f" {why}; every step would pass as on a machine without a GPU"
        )
    return True, f"nvidia-smi lists {gpus} GPU(s), {expected} visible; torch sees {seen}"


def clean_env(**extra):
    """This environment without a launcher's variables, plus *extra*."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PET_", "MASTER_", "TORCHELASTIC_"))
        and key not in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE")
    }
    env.update(extra)
    return env


class ComputeApps:
    """While in use, the processes that had a CUDA context (``nvidia-smi --query-compute-apps``)
    and were not there before: in a CPU fallback, there must be none."""

    QUERY = ("--query-compute-apps=pid,process_name,used_memory", "--format=csv,noheader")

    def __init__(self):
        self.before = self._now()
        self.seen, self._stop = set(), threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _now(self):
        listed = nvidia_smi(*self.QUERY)
        return None if listed is None else {line.strip() for line in listed.splitlines() if line.strip()}

    def _watch(self):
        while not self._stop.wait(0.5):
            self.seen |= self._now() or set()

    def __enter__(self):
        if self.before is not None:
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def new(self):
        """The compute apps that appeared while in use, by pid and name (memory left out)."""
        if self.before is None:
            return []
        before = {line.rsplit(",", 1)[0] for line in self.before}
        return sorted({line.rsplit(",", 1)[0] for line in self.seen} - before)


def run(command, cwd, env=None, limit=LIMIT):
    """Run *command*; return (exit code or "timeout", seconds, its output)."""
    start = time.monotonic()
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            env=env or clean_env(),
            text=True,
            timeout=limit,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        code, output = done.returncode, done.stdout
    except subprocess.TimeoutExpired as late:
        output = late.stdout or ""
        code, output = "timeout", output if isinstance(output, str) else output.decode("utf-8", "replace")
    return code, time.monotonic() - start, output


def where(rank, processes, gpus):
    """What rank *rank* of a job of *processes* says on a machine with *gpus* GPUs."""
    return f"nccl on cuda:{rank}" if gpus >= processes else "gloo on cpu"


def reader_commands(gpus):
    """(name, command, expected lines, folder) for every command the pages give."""
    python, torchrun = sys.executable, [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    page = {n: str(EXAMPLES / f"{name}.py") for n, name in PAGES.items()}
    counts = sorted({1, 2, max(gpus, 1), gpus + 1})
    more = f"{gpus + 1} processes on this machine and {gpus} GPU"  # the fallback sentence
    steps = [
        ("read_01", [python, page["01"]], ["# 1 × " if gpus else "# 1 GPU emulated on CPU"], "01"),
        ("read_02", [python, page["02"]], [f"CUDA available: {bool(gpus)}"], "02"),
    ]
    for n in counts:
        fallback = [more] if gpus and n == gpus + 1 else []
        samples = [f"{where(r, n, gpus)}: " for r in range(n)]  # plot_03: a line per rank
        ranks = [f"rank {r}: {where(r, n, gpus)}" for r in range(n)]  # plot_04, plot_05
        steps += [
            (
                f"read_03_torchrun{n}",
                [*torchrun, f"--nproc-per-node={n}", page["03"]],
                samples + fallback,
                f"03-torchrun{n}",
            ),
            (f"read_03_spawn{n}", [python, page["03"], str(n)], samples + fallback, f"03-spawn{n}"),
            (
                f"read_04_torchrun{n}",
                [*torchrun, f"--nproc-per-node={n}", page["04"]],
                ranks + ["epoch 4: loss"] + fallback,
                f"04-torchrun{n}",
            ),
            (
                f"read_04_again{n}",
                [*torchrun, f"--nproc-per-node={n}", page["04"]],
                ranks + ["resumed from epoch-4.pt: 4 epochs done"],
                f"04-torchrun{n}",
            ),
            (
                f"read_05_torchrun{n}",
                [*torchrun, f"--nproc-per-node={n}", page["05"]],
                ranks + ["step 6: loss", "saved step-6:"] + fallback,
                f"05-torchrun{n}",
            ),
            (
                f"read_05_again{n}",
                [*torchrun, f"--nproc-per-node={n}", page["05"]],
                ranks + ["resumed from step-6: 6 steps done; random states restored"],
                f"05-torchrun{n}",
            ),
        ]
    steps.append(
        (
            "read_06_seed",
            [*torchrun, "--nproc-per-node=1", page["06"]],
            [f"rank 0: {where(0, 1, gpus)}", "wrote the seed checkpoint seed:"],
            "06",
        )
    )
    for n in counts:
        fallback = [more] if gpus and n == gpus + 1 else []
        ranks = [f"rank {r}: {where(r, n, gpus)}" for r in range(n)]
        steps.append(
            (
                f"read_06_torchrun{n}",
                [*torchrun, f"--nproc-per-node={n}", page["06"]],
                ranks + ["values from seed", "step 3: loss"] + fallback,
                "06",
            )
        )
    return steps


def missing_lines(output, expected):
    """The *expected* substrings that *output* lacks, each as often as it is expected."""
    wanted = {}
    for line in expected:
        wanted[line] = wanted.get(line, 0) + 1
    return [line for line, times in wanted.items() if output.count(line) < times]


def build_site(scratch):
    """The three languages, as ``make html`` builds them, for the tests that read the site."""
    code, seconds, output = run([sys.executable, "-m", "build.site", "html"], ROOT, limit=SITE_LIMIT)
    lines = [line for line in output.splitlines() if line.startswith("--- ")]
    return code, seconds, output, lines[-1] if lines else ""


def cuda_tests(scratch):
    """The CUDA tests and the pages' claims, as pytest runs them, on the built site."""
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        "tests/test_dataparallel_emulation.py",
        "tests/test_ddp.py",
        "tests/test_training.py",
    ]
    code, seconds, output = run(command, ROOT, limit=TESTS_LIMIT)
    summary = output.strip().splitlines()[-1] if output.strip() else ""
    return code, seconds, output, summary


# The first cell of every notebook run here, as a reader's kernel may have run it.
POISON = """import torch
print("CUDA available:", torch.cuda.is_available())  # the usual first cell
torch.ones(1, requires_grad=True).sum().backward()  # and a backward pass
"""
REFUSED = "this machine has GPUs"  # what the launchers of plot_03 to plot_06 say in a notebook


def notebook_steps(gpus):
    """(name, notebook, expected line) for each tutorial's notebook in the built site."""
    steps = []
    for number, name in PAGES.items():
        found = sorted((ROOT / "_build" / "html" / "en" / "_downloads").rglob(f"{name}.ipynb"))
        launches = number in ("03", "04", "05", "06")
        expected = f"refused: {REFUSED}" if launches and gpus else "ran to the end"
        steps.append((f"notebook_{number}", found[0] if found else None, expected))
    return steps


def execute_notebook(path, folder):
    """Run the notebook *path* in a fresh kernel that first ran POISON; print how it ended."""
    import nbformat
    from nbclient.exceptions import CellExecutionError
    from nbconvert.preprocessors import ExecutePreprocessor

    notebook = nbformat.read(path, as_version=4)
    notebook.cells.insert(0, nbformat.v4.new_code_cell(POISON))
    try:
        ExecutePreprocessor(timeout=NOTEBOOK_LIMIT, kernel_name="python3").preprocess(
            notebook, {"metadata": {"path": str(folder)}}
        )
    except CellExecutionError as error:
        said = f"{error.ename}: {error.evalue}"
        print(f"refused: {said}" if said.startswith(f"RuntimeError: {REFUSED}") else f"failed: {said}")
        return 0
    print("ran to the end")
    return 0


def build_outputs(scratch):
    """``make outputs`` with a throwaway key; verify the recording; list its headers."""
    key = scratch / "throwaway.pem"
    made = subprocess.run(
        [sys.executable, "-m", "build.outputs", "keygen", str(key)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if made.returncode:
        return made.returncode, 0.0, made.stdout + made.stderr, "keygen failed"
    out = scratch / "outputs.json"
    code, seconds, output = run(
        [sys.executable, "-m", "build.outputs", "record", "--key", str(key), "--out", str(out)],
        ROOT,
        limit=1200,
    )
    if code != 0:
        return code, seconds, output, "an example failed as the build runs it"
    sys.path.insert(0, str(ROOT / "conf"))
    import base64

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    from extensions.recordings import verified

    public = base64.b64decode(made.stdout.split()[0])
    recording = verified(out, [Ed25519PublicKey.from_public_bytes(public)])
    headers = []
    for name, example in sorted(recording["examples"].items()):
        for cell in example["cells"]:
            if cell and cell.startswith("# ") and re.match(r"# \d", cell):
                headers.append(f"{name}: {cell.splitlines()[0]}")
    return 0, seconds, output + "\n" + "\n".join(headers), f"{len(headers)} result headers"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "gpu-check")
    parser.add_argument(
        "--only",
        nargs="*",
        default=None,
        metavar="STEP",
        help="run only the steps whose name starts with one of these",
    )
    parser.add_argument("--notebook", type=Path, help=argparse.SUPPRESS)  # one notebook, in a step
    args = parser.parse_args(argv)
    if args.notebook:
        return execute_notebook(args.notebook, Path.cwd())
    start = time.monotonic()
    found = facts()
    gpus = len(found["gpus"])
    try:
        import sphinx  # noqa: F401  (only to know whether the build's steps can run)

        sphinx_stack = True
    except ImportError:
        sphinx_stack = False
    results, skipped = [], []
    wanted = lambda name: args.only is None or any(name.startswith(p) for p in args.only)  # noqa: E731

    def step(name, passed, code, seconds, summary, output):
        results.append((name, passed, code, seconds, summary, output))
        print(f"{name}: {'ok' if passed else 'FAILED'} ({seconds:.0f} s) {summary[:150]}", flush=True)

    with tempfile.TemporaryDirectory(prefix="gpu-check-") as tmp:
        scratch = Path(tmp)
        if wanted("machine"):
            passed, summary = machine(found)
            step("machine", passed, 0 if passed else 1, 0.0, summary, json.dumps(found))
        for name, job in (("site", build_site), ("cuda_tests", cuda_tests)):
            if wanted(name):
                if sphinx_stack:
                    code, seconds, output, summary = job(scratch)
                    step(name, code == 0, code, seconds, summary, output)
                else:
                    skipped.append(f"{name}: Sphinx is not installed here (the build's steps)")
        for name, command, expected, folder in reader_commands(gpus):
            if not wanted(name):
                continue
            cwd = scratch / folder
            cwd.mkdir(exist_ok=True)
            processes = int(re.search(r"(\d+)$", name)[1]) if name[-1].isdigit() else 1
            with ComputeApps() as apps:
                code, seconds, output = run(command, cwd)
            missing = missing_lines(output, expected)
            contexts = apps.new() if gpus and processes > gpus else []
            summary = "; ".join(
                [f"missing {line!r}" for line in missing]
                + [f"a CPU process had a CUDA context: {app}" for app in contexts]
            ) or (output.strip().splitlines()[-1] if output.strip() else "")
            step(name, code == 0 and not missing and not contexts, code, seconds, summary, output)
        for name, notebook, expected in notebook_steps(gpus):
            if not wanted(name):
                continue
            if notebook is None:
                skipped.append(f"{name}: no built notebook (the site step builds them)")
                continue
            cwd = scratch / name
            cwd.mkdir()
            code, seconds, output = run(
                [sys.executable, __file__, "--notebook", str(notebook)], cwd, limit=NOTEBOOK_LIMIT + 60
            )
            said = output.strip().splitlines()[-1] if output.strip() else ""
            step(
                name,
                code == 0 and said.startswith(expected),
                code,
                seconds,
                said if said.startswith(expected) else f"expected {expected!r}, got {said!r}",
                output,
            )
        if wanted("outputs"):
            if sphinx_stack:
                code, seconds, output, summary = build_outputs(scratch)
                step("outputs", code == 0, code, seconds, summary, output)
            else:
                skipped.append("outputs: Sphinx is not installed here (the build's steps)")
    not_proven = unproven(gpus)
    if gpus and nvidia_smi("--query-compute-apps=pid", "--format=csv,noheader") is None:
        not_proven.insert(0, "that the CPU fallbacks open no CUDA context: nvidia-smi cannot list them")
    write_report(args.out, found, results, skipped, not_proven, time.monotonic() - start)
    failed = [name for name, passed, *_ in results if not passed]
    print(
        f"gpu-check: {len(results) - len(failed)} of {len(results)} steps passed"
        + (f"; failed: {', '.join(failed)}" if failed else "")
        + f"; {time.monotonic() - start:.0f} s on {gpus} GPU(s); report: {args.out / 'report.md'}"
    )
    for why in skipped:
        print(f"skipped: {why}")
    print("this run proves nothing about:")
    for line in not_proven:
        print(f"  - {line}")
    return 1 if failed else 0


def write_report(folder, found, results, skipped, not_proven, seconds):
    """report.md and report.json in *folder*."""
    folder.mkdir(parents=True, exist_ok=True)
    gpus = found["gpus"]
    lines = [
        "# GPU check",
        "",
        f"Python {found['python']}, PyTorch {found['torch']}, CUDA {found['cuda']},"
        f" NCCL {found['nccl']}; GPUs: {len(gpus)}"
        + (f" × {', '.join(sorted(set(gpus)))}" if gpus else "")
        + f"; {seconds:.0f} s in all.",
        "",
        "| step | result | exit | seconds | last line or what was missing |",
        "|---|---|---|---|---|",
    ]
    for name, passed, code, secs, summary, _ in results:
        cell = summary.replace("|", "\\|")[:200]
        lines.append(f"| {name} | {'ok' if passed else '**failed**'} | {code} | {secs:.0f} | {cell} |")
    lines += [
        "",
        *[f"Skipped: {why}." for why in skipped],
        "",
        "## What this run proves nothing about",
        "",
        *[f"- {line}" for line in not_proven],
        "",
    ]
    for name, passed, code, secs, summary, output in results:
        if not passed:
            lines += [f"## {name}", "", "```", output[-TAIL:], "```", ""]
    (folder / "report.md").write_text("\n".join(lines), "utf-8")
    (folder / "report.json").write_text(
        json.dumps(
            {
                "facts": found,
                "skipped": skipped,
                "not_proven": not_proven,
                "seconds": round(seconds),
                "steps": [
                    {
                        "name": n,
                        "passed": p,
                        "exit": c,
                        "seconds": round(s, 1),
                        "summary": m,
                        "output": o[-TAIL:],
                    }
                    for n, p, c, s, m, o in results
                ],
            },
            indent=1,
        ),
        "utf-8",
    )


if __name__ == "__main__":
    sys.exit(main())
