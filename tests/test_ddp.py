"""The DDP tutorial: its shards, its checks, its launcher, and its claims about torch.

The tutorial runs once per session (``tutorial``); the launcher tests use only
its definitions (``definitions``), which start no processes.
"""

import contextlib
import io
import math
import os
import re
import runpy
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")
from torch.multiprocessing import ProcessRaisedException  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402
from torch.utils.data import DistributedSampler  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "plot_03_distributed_data_parallel.py"
WORLD_SIZES = (1, 2, 3, 8)
# From the issue: samples per process and how many of all are repeats.
EXPECTED_SHARDS = {1: (100, 0), 2: (50, 0), 3: (34, 2), 8: (13, 4)}

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc, forks")


@pytest.fixture(scope="session")
def definitions():
    """The example's functions, without running any of its cells that do work."""
    return runpy.run_path(str(EXAMPLE), run_name="ddp_tutorial")


@pytest.fixture(scope="session")
def tutorial():
    """The example's globals after one run as a script, and what it printed."""
    assert "LOCAL_RANK" not in os.environ, "would run as one torchrun process"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        namespace = runpy.run_path(str(EXAMPLE), run_name="__main__")
    return namespace, printed.getvalue()


def child_pids():
    """Processes whose parent is this one."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            status = (entry / "status").read_text()
        except (OSError, ValueError):
            continue
        fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
        if fields.get("PPid", "").strip() == str(os.getpid()):
            pids.append(int(entry.name))
    return pids


@pytest.mark.parametrize("world_size", WORLD_SIZES)
def test_shards_are_distributed_samplers(tutorial, world_size):
    namespace, printed = tutorial
    dataset, done = namespace["dataset"], namespace["runs"][world_size]
    per_step = math.ceil(namespace["batch_size"] / world_size)
    for rank, report in enumerate(done):
        sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank)
        sampler.set_epoch(0)
        expected = list(sampler)
        assert report["samples"] == expected
        n = len(expected)
        assert report["batch_sizes"] == [min(per_step, n - i) for i in range(0, n, per_step)]
    per_process, repeated = EXPECTED_SHARDS[world_size]
    assert len(sampler) == per_process
    assert world_size * per_process - len(dataset) == repeated
    counts = " + ".join([str(per_process)] * world_size)
    summary = f"samples: {counts} = {world_size * per_process}, 100 distinct, {repeated} repeated"
    assert summary in printed.splitlines()


@pytest.mark.parametrize("world_size", WORLD_SIZES)
def test_one_ddp_step_equals_one_process(tutorial, world_size):
    namespace, printed = tutorial
    done = namespace["runs"][world_size]
    first = [s for report in done for s in report["samples"][: report["batch_sizes"][0]]]
    with contextlib.redirect_stdout(io.StringIO()):
        single = namespace["train_one_step"](first)
    _ = torch.manual_seed(0)
    initial = namespace["Model"](5, 2).state_dict()
    for name, expected in single.items():
        assert not torch.equal(expected, initial[name]), "the step changed nothing"
        values = [torch.tensor(report["after_first_step"][name]) for report in done]
        for value in values:
            assert torch.equal(value, values[0])
            torch.testing.assert_close(value, expected)
    plural = "es" if world_size > 1 else ""
    line = f"{world_size} process{plural}: ranks identical: True, equal to one process: True"
    assert line in printed.splitlines()


def test_output_is_clean(tutorial):
    _, printed = tutorial
    assert "warn" not in printed.lower()
    assert "error" not in printed.lower()


def hang_rank_1():
    """Rank 1 never arrives, so rank 0 waits in the rendezvous for ever."""
    if os.environ["RANK"] == "1":
        time.sleep(3600)
    dist.init_process_group("gloo")


def fail_rank_1():
    """Rank 1 raises before the rendezvous; rank 0 waits there for it."""
    if os.environ["RANK"] == "1":
        raise ValueError("rank 1 gave up")
    dist.init_process_group("gloo")


def test_timeout_stops_a_hung_rendezvous(definitions):
    before = set(child_pids())  # other tests may keep helpers (a browser) alive
    start = time.monotonic()
    with pytest.raises(TimeoutError, match=r"rank\(s\) \[0, 1\] still running after 2 s"):
        definitions["launch"](2, hang_rank_1, timeout=2)
    assert time.monotonic() - start < 6
    assert set(child_pids()) - before == set()


def test_failing_rank_raises_its_error(definitions):
    before = set(child_pids())
    start = time.monotonic()
    with pytest.raises(ProcessRaisedException, match="rank 1 gave up") as raised:
        definitions["launch"](2, fail_rank_1, timeout=60)
    assert raised.value.error_index == 1
    assert time.monotonic() - start < 10
    assert set(child_pids()) - before == set()


def test_launch_returns_output_and_value_in_rank_order(definitions):
    def report():
        print("rank", os.environ["RANK"], "of", os.environ["WORLD_SIZE"])
        return int(os.environ["RANK"]) * 10

    before = set(child_pids())
    results = definitions["launch"](3, report)
    assert results == [(f"rank {r} of 3\n", r * 10) for r in range(3)]
    assert set(child_pids()) - before == set()


def test_uneven_batches_time_out_without_join_and_finish_with_it(tutorial):
    _, printed = tutorial
    lines = printed.splitlines()
    start = lines.index("without join:")
    without, joined = lines[start + 1 : start + 3], lines[start + 4 : start + 6]
    assert lines[start + 3] == "with model.join():"
    stopped = re.fullmatch(r"  rank 0: 3 batches, stopped after (\d+) s: (.*)", without[0])
    assert stopped, without[0]
    assert int(stopped.group(1)) >= 3 and "Timed out" in stopped.group(2)
    assert without[1] == "  rank 1: 2 batches, finished"
    assert joined == ["  rank 0: 3 batches, finished", "  rank 1: 2 batches, finished"]


def buffers_after_forward():
    """Each rank gives its buffer its own value, before wrapping and before a forward."""
    dist.init_process_group("gloo")
    try:
        layer = torch.nn.Linear(2, 2)
        layer.register_buffer("seen", torch.full((1,), float(dist.get_rank())))
        model = DDP(layer)
        at_wrap = layer.seen.item()
        layer.seen.fill_(10 + dist.get_rank())
        model(torch.randn(3, 2))
        after_forward = layer.seen.item()
        del model
        return at_wrap, after_forward
    finally:
        dist.destroy_process_group()


def test_ddp_copies_rank_0_buffers_at_a_forward_with_grad(definitions):
    results = [value for _, value in definitions["launch"](2, buffers_after_forward)]
    assert results == [(0.0, 10.0), (0.0, 10.0)]  # rank 1's 1 and 11 were overwritten


def join_without_local_rank():
    """init_process_group reads RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT only."""
    del os.environ["LOCAL_RANK"]
    if os.environ["RANK"] == "1":
        time.sleep(2)
    start = time.monotonic()
    dist.init_process_group("gloo")
    waited = time.monotonic() - start
    dist.destroy_process_group()
    return waited


def test_gloo_init_waits_for_every_process_and_ignores_local_rank(definitions):
    waited = [value for _, value in definitions["launch"](2, join_without_local_rank)]
    assert waited[0] >= 1.5  # rank 0 waited for rank 1 to connect


def test_launch_explains_that_a_notebook_cannot_spawn(definitions, monkeypatch):
    monkeypatch.setitem(definitions["launch"].__globals__, "START_METHOD", "spawn")
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))  # no __file__
    with pytest.raises(RuntimeError, match="run this tutorial as a script"):
        definitions["launch"](2, join_without_local_rank)


PRINT_PORT = """
import os, runpy, sys
print("port", os.environ["MASTER_PORT"], flush=True)
runpy.run_path(sys.argv[1], run_name="__main__")
"""


def test_two_torchrun_jobs_on_one_machine_do_not_collide(tmp_path):
    """torch 2.13: single-node torchrun without --master-port picks a free port."""
    script = tmp_path / "print_port.py"
    script.write_text(PRINT_PORT)
    torchrun = [sys.executable, "-m", "torch.distributed.run"]  # what torchrun runs
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PET_", "MASTER_"))}
    # Each rank's output in its own file (torchrun's --redirects): on one pipe,
    # two ranks' unflushed lines can interleave mid-line on a busy machine.
    logs = [tmp_path / f"job{i}" for i in range(2)]
    jobs = [
        subprocess.Popen([*torchrun, "--nproc-per-node=2", f"--log-dir={log}", "--redirects=3",
                          str(script), str(EXAMPLE)],
                         cwd=tmp_path, env=env, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        for log in logs
    ]  # fmt: skip
    launcher = [job.communicate(timeout=240)[0] for job in jobs]
    ranks = [sorted(log.rglob("stdout.log")) for log in logs]
    outputs = [[path.read_text() for path in paths] for paths in ranks]
    assert [job.returncode for job in jobs] == [0, 0], (launcher, outputs)
    assert [len(paths) for paths in ranks] == [2, 2], ranks
    ports = [{m for out in job for m in re.findall(r"^port (\d+)$", out, re.M)} for job in outputs]
    assert all(len(p) == 1 for p in ports) and ports[0] != ports[1], ports
    assert "29500" not in ports[0] | ports[1]
    for job in outputs:
        for out in job:
            assert out.count("gloo on cpu: 50 of 100 samples") == 1, out
