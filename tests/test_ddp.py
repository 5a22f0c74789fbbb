"""The DDP tutorial: its shards, its parameter check, and its launcher's clean-up.

The tutorial runs once per session (``tutorial``); the launcher tests use only
its definitions (``definitions``), which start no processes.
"""

import contextlib
import io
import math
import os
import runpy
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")
from torch.multiprocessing import ProcessRaisedException  # noqa: E402
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
