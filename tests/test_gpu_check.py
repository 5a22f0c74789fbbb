"""The prepared GPU check (tests/gpu_check.py) on the CPU: what it expects of a machine.

A fake ``nvidia-smi`` on ``PATH`` stands for the GPUs' driver: it lists GPUs
that this CPU build of torch cannot see, and compute apps that appear while
a step runs. The GPU steps themselves run only on GPUs (``make gpu-check``).
"""

import subprocess
import sys
import time

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "tests"))
import gpu_check  # noqa: E402

FAKE = """#!/bin/sh
case "$1" in
  -L) echo "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0f0e0d0c-0b0a-0908-0706-050403020100)"
      echo "  MIG 1g.10gb     Device  0: (UUID: MIG-00000000-0000-0000-0000-000000000000)";;
  --query-compute-apps=*) [ -f "{marker}" ] && echo "4242, python, 500 MiB"; true;;
  *) exit 1;;
esac
"""


@pytest.fixture
def fake_nvidia_smi(tmp_path, monkeypatch):
    """A PATH whose nvidia-smi lists one H100 and, once *marker* exists, a process on it."""
    marker = tmp_path / "context"
    script = tmp_path / "bin" / "nvidia-smi"
    script.parent.mkdir()
    script.write_text(FAKE.format(marker=marker))
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{script.parent}:{gpu_check.os.environ['PATH']}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    return marker


def test_gpus_that_torch_cannot_see_fail_the_check(fake_nvidia_smi, tmp_path):
    """A CPU build of torch on a GPU machine must not pass as "a machine without a GPU"."""
    done = subprocess.run(
        [sys.executable, "tests/gpu_check.py", "--only", "machine", "--out", str(tmp_path / "report")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    report = (tmp_path / "report" / "report.md").read_text()
    said = "nvidia-smi lists 1 GPU(s) (1 visible), torch sees 0: torch is a build without CUDA"
    assert said in report and said in done.stdout
    assert "this run proves nothing about:" in done.stdout and "anything about CUDA" in done.stdout
    assert "## What this run proves nothing about" in report


def test_gpus_hidden_on_purpose_are_not_a_failure(fake_nvidia_smi, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert gpu_check.machine({"gpus": [], "cuda": None})[0]


def test_a_cuda_context_that_appears_while_a_step_runs_is_named(fake_nvidia_smi):
    with gpu_check.ComputeApps() as apps:
        fake_nvidia_smi.write_text("")  # a process opens a context on the GPU
        time.sleep(1.5)
    assert apps.new() == ["4242, python"]
    with gpu_check.ComputeApps() as apps:  # it was there before: not this step's
        time.sleep(1)
    assert apps.new() == []


@pytest.mark.parametrize("gpus", [0, 1, 2, 8])
def test_every_rank_of_every_command_must_say_where_it_ran(gpus):
    steps = {name: expected for name, _, expected, _ in gpu_check.reader_commands(gpus)}
    for processes in sorted({1, 2, max(gpus, 1), gpus + 1}):
        on_gpus = gpus >= processes
        for rank in range(processes):
            where = f"nccl on cuda:{rank}" if on_gpus else "gloo on cpu"
            for page in ("04_torchrun", "04_again", "05_torchrun", "05_again", "06_torchrun"):
                assert f"rank {rank}: {where}" in steps[f"read_{page}{processes}"]
        for page in ("03_torchrun", "03_spawn"):
            lines = steps[f"read_{page}{processes}"]
            assert (
                sum(line.startswith("nccl on cuda:" if on_gpus else "gloo on cpu") for line in lines)
                == processes
            )
        fallback = f"{gpus + 1} processes on this machine and {gpus} GPU"
        for page in ("04", "06"):
            assert (fallback in steps[f"read_{page}_torchrun{processes}"]) == (gpus > 0 and not on_gpus)
    assert steps["read_06_seed"][0] == f"rank 0: {'nccl on cuda:0' if gpus else 'gloo on cpu'}"


def test_what_a_run_cannot_prove_is_named_for_its_gpus():
    assert "anything about CUDA" in gpu_check.unproven(0)[0]
    assert gpu_check.unproven(1)[0].startswith("NCCL between GPUs")
    assert not any("NCCL between GPUs" in line for line in gpu_check.unproven(2))
    assert any("8 GPUs (emulated here)" in line for line in gpu_check.unproven(4))
    assert all("several machines" in lines[-1] for lines in map(gpu_check.unproven, (0, 1, 8)))


def test_the_notebooks_of_the_launching_pages_must_refuse_on_gpus_and_run_without():
    expected = {name: line for name, _, line in gpu_check.notebook_steps(1)}
    assert expected["notebook_01"] == expected["notebook_02"] == "ran to the end"
    assert {expected[f"notebook_0{n}"] for n in (3, 4, 5, 6)} == {f"refused: {gpu_check.REFUSED}"}
    assert {line for _, _, line in gpu_check.notebook_steps(0)} == {"ran to the end"}
