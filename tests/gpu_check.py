"""The prepared GPU check: what a machine with GPUs must do that a CPU build cannot prove.

Usage:
    make gpu-check                      (or python tests/gpu_check.py [--out DIR] [--only NAME ...])

Runs, each under its own time limit, and writes one report
(``_build/gpu-check/report.md``, and ``report.json``):

1. the machine: PyTorch, CUDA, NCCL, the GPUs;
2. the CUDA tests: ``tests/test_dataparallel_emulation.py`` (real
   ``nn.DataParallel`` against the emulation) and ``tests/test_ddp.py`` (the
   DDP page's own run, on the GPUs it finds);
3. every command the pages give a reader, with 1 and 2 processes, with as
   many processes as the machine has GPUs and with one more than that (which
   must fall back to the CPU and ``gloo``, saying so); plot_04 again, to
   resume from its checkpoint;
4. the examples as the build runs them (Sphinx-Gallery, one process, after
   plot_01 has used CUDA): ``make outputs`` with a throwaway key, whose
   recording is then verified and its result headers listed.

Each step says what it expected of this machine: a process per GPU (nccl
on cuda:N) where there are enough GPUs, the CPU (gloo) where there are not.
On a machine without GPUs it runs what it can (everything runs on the CPU)
and the report names what that proves nothing about. Steps that need the
Sphinx stack are reported as skipped where it is not installed.

Exit codes: 0 every step passed, 1 a step failed, 2 bad usage.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
LIMIT = 300  # seconds a command may take
TAIL = 1500  # characters of a step's output kept in the report


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


def clean_env(**extra):
    """This environment without a launcher's variables, plus *extra*."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("PET_", "MASTER_", "TORCHELASTIC_"))
           and key not in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE")}  # fmt: skip
    env.update(extra)
    return env


def run(command, cwd, env=None, limit=LIMIT):
    """Run *command*; return (exit code or "timeout", seconds, its output)."""
    start = time.monotonic()
    try:
        done = subprocess.run(command, cwd=cwd, env=env or clean_env(), text=True, timeout=limit,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # fmt: skip
        code, output = done.returncode, done.stdout
    except subprocess.TimeoutExpired as late:
        code, output = "timeout", (late.stdout or b"").decode("utf-8", "replace")
    return code, time.monotonic() - start, output


def where(processes, gpus):
    """What a job of *processes* processes must print on a machine with *gpus* GPUs."""
    return "nccl on cuda:0" if gpus >= processes else "gloo on cpu"


def reader_commands(gpus):
    """(name, command, expected lines, folder) for every command the pages give."""
    python, torchrun = sys.executable, [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    page = {n: str(EXAMPLES / name) for n, name in (
        ("01", "plot_01_dataparallel.py"), ("02", "plot_02_dataparallel_in_depth.py"),
        ("03", "plot_03_distributed_data_parallel.py"), ("04", "plot_04_train_with_ddp.py"),
        ("05", "plot_05_fsdp2.py"))}  # fmt: skip
    counts = sorted({1, 2, max(gpus, 1), gpus + 1})
    more = f"{gpus + 1} processes on this machine and {gpus} GPU"  # the fallback sentence
    steps = [
        ("read_01", [python, page["01"]],
         ["# 1 × " if gpus else "# 1 GPU emulated on CPU"], "01"),
        ("read_02", [python, page["02"]], ["CUDA available:"], "02"),
    ]  # fmt: skip
    for n in counts:
        fallback = [more] if gpus and n == gpus + 1 else []
        steps.append((f"read_03_torchrun{n}", [*torchrun, f"--nproc-per-node={n}", page["03"]],
                      [where(n, gpus)] + fallback, f"03-torchrun{n}"))  # fmt: skip
        steps.append((f"read_03_spawn{n}", [python, page["03"], str(n)],
                      [where(n, gpus)] + fallback, f"03-spawn{n}"))  # fmt: skip
        steps.append((f"read_04_torchrun{n}", [*torchrun, f"--nproc-per-node={n}", page["04"]],
                      ["epoch 4: loss"] + fallback, f"04-torchrun{n}"))  # fmt: skip
        steps.append((f"read_04_again{n}", [*torchrun, f"--nproc-per-node={n}", page["04"]],
                      ["resumed from epoch-4.pt: 4 epochs done"], f"04-torchrun{n}"))  # fmt: skip
        steps.append((f"read_05_torchrun{n}", [*torchrun, f"--nproc-per-node={n}", page["05"]],
                      ["step 6: loss", "saved step-6:"] + fallback, f"05-torchrun{n}"))  # fmt: skip
        steps.append((f"read_05_again{n}", [*torchrun, f"--nproc-per-node={n}", page["05"]],
                      ["resumed from step-6: 6 steps done"], f"05-torchrun{n}"))  # fmt: skip
    return steps


def cuda_tests(scratch):
    """The CUDA tests, as pytest runs them."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
               "tests/test_dataparallel_emulation.py", "tests/test_ddp.py"]  # fmt: skip
    code, seconds, output = run(command, ROOT, limit=600)
    summary = output.strip().splitlines()[-1] if output.strip() else ""
    return code, seconds, output, summary


def build_outputs(scratch):
    """``make outputs`` with a throwaway key; verify the recording; list its headers."""
    key = scratch / "throwaway.pem"
    made = subprocess.run([sys.executable, "conf/site_build/outputs.py", "keygen", str(key)],
                          cwd=ROOT, capture_output=True, text=True)  # fmt: skip
    if made.returncode:
        return made.returncode, 0.0, made.stdout + made.stderr, "keygen failed"
    out = scratch / "outputs.json"
    code, seconds, output = run([sys.executable, "conf/site_build/outputs.py", "record", "--key",
                                 str(key), "--out", str(out)], ROOT, limit=1200)  # fmt: skip
    if code != 0:
        return code, seconds, output, "an example failed as the build runs it"
    sys.path.insert(0, str(ROOT / "conf"))
    import base64

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    from site_extensions.recordings import verified

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
    args = parser.parse_args(argv)
    found = facts()
    gpus = len(found["gpus"])
    try:
        import sphinx  # noqa: F401  (only to know whether the build's steps can run)

        sphinx_stack = True
    except ImportError:
        sphinx_stack = False
    results, skipped = [], []
    if not gpus:
        skipped.append(
            "no GPU: the CUDA tests skip themselves, every command and the build run"
            " on the CPU with gloo, and nothing here says anything about CUDA or NCCL"
        )
    wanted = lambda name: args.only is None or any(name.startswith(p) for p in args.only)  # noqa: E731
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as tmp:
        scratch = Path(tmp)
        if wanted("cuda_tests"):
            code, seconds, output, summary = cuda_tests(scratch)
            results.append(("cuda_tests", code == 0, code, seconds, summary, output))
        for name, command, expected, folder in reader_commands(gpus):
            if not wanted(name):
                continue
            cwd = scratch / folder
            cwd.mkdir(exist_ok=True)
            code, seconds, output = run(command, cwd)
            missing = [line for line in expected if line not in output]
            summary = "; ".join(f"missing {line!r}" for line in missing) or (
                output.strip().splitlines()[-1] if output.strip() else ""
            )
            results.append((name, code == 0 and not missing, code, seconds, summary, output))
        if wanted("outputs"):
            if sphinx_stack:
                code, seconds, output, summary = build_outputs(scratch)
                results.append(("outputs", code == 0, code, seconds, summary, output))
            else:
                skipped.append("outputs: Sphinx is not installed here (the build's steps)")
    write_report(args.out, found, results, skipped)
    failed = [name for name, passed, *_ in results if not passed]
    print(
        f"gpu-check: {len(results) - len(failed)} of {len(results)} steps passed"
        + (f"; failed: {', '.join(failed)}" if failed else "")
        + f"; report: {args.out / 'report.md'}"
    )
    return 1 if failed else 0


def write_report(folder, found, results, skipped):
    """report.md and report.json in *folder*."""
    folder.mkdir(parents=True, exist_ok=True)
    gpus = found["gpus"]
    lines = ["# GPU check", "",
             f"Python {found['python']}, PyTorch {found['torch']}, CUDA {found['cuda']},"
             f" NCCL {found['nccl']}; GPUs: {len(gpus)}"
             + (f" × {', '.join(sorted(set(gpus)))}" if gpus else ""), "",
             "| step | result | exit | seconds | last line or what was missing |",
             "|---|---|---|---|---|"]  # fmt: skip
    for name, passed, code, seconds, summary, _ in results:
        cell = summary.replace("|", "\\|")[:200]
        lines.append(f"| {name} | {'ok' if passed else '**failed**'} | {code} | {seconds:.0f} | {cell} |")
    lines += ["", *[f"Skipped: {why}." for why in skipped], ""]
    for name, passed, code, seconds, summary, output in results:
        if not passed:
            lines += [f"## {name}", "", "```", output[-TAIL:], "```", ""]
    (folder / "report.md").write_text("\n".join(lines), "utf-8")
    (folder / "report.json").write_text(json.dumps({
        "facts": found, "skipped": skipped,
        "steps": [{"name": n, "passed": p, "exit": c, "seconds": round(s, 1), "summary": m,
                   "output": o[-TAIL:]} for n, p, c, s, m, o in results],
    }, indent=1), "utf-8")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
