"""The DDP tutorial: its shards, its checks, its launcher, and its claims about torch.

What the executed page printed is read from the built site (the build runs
the tutorial once); the launcher tests use only its definitions, loaded as the
launcher's processes load them (``as_script``).
"""

import ast
import math
import os
import re
import runpy
import socket
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest
from conftest import ROOT, loaded_as_script, printed_lines
from extensions import example_guard

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")
from torch.multiprocessing import ProcessRaisedException  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402
from torch.utils.data import DistributedSampler  # noqa: E402

EXAMPLE = ROOT / "examples" / "plot_03_distributed_data_parallel.py"
LAUNCHING = [
    ROOT / "examples" / name
    for name in (
        "plot_03_distributed_data_parallel.py",
        "plot_04_train_with_ddp.py",
        "plot_05_fsdp2.py",
        "plot_06_fsdp2_at_scale.py",
    )
]
WORLD_SIZES = (1, 2, 3, 8)
# From the issue: samples per process and how many of all are repeats.
EXPECTED_SHARDS = {1: (100, 0), 2: (50, 0), 3: (34, 2), 8: (13, 4)}

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc, forks")


@pytest.fixture(scope="module")
def as_script():
    """The example's functions, as its launcher's processes load them (no cell that does work),
    with the fork server already started, so that a test timing a launch times the launch."""
    with loaded_as_script(EXAMPLE) as namespace:
        namespace["launch"](1, nothing)
        yield namespace


def nothing():
    """A job that does nothing."""


def ranks_left():
    """Processes below this one, but multiprocessing's own helpers (its fork server and resource
    tracker, started once per process): what a launcher started and left running."""
    parents, commands = {}, {}
    for entry in Path("/proc").iterdir():
        try:
            status = (entry / "status").read_text()
            commands[int(entry.name)] = (entry / "cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
        parents[int(entry.name)] = int(fields.get("PPid", "0").strip())
    below, todo = set(), [os.getpid()]
    while todo:
        parent = todo.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in below:
                below.add(pid)
                todo.append(pid)
    helpers = (b"multiprocessing.forkserver", b"multiprocessing.resource_tracker")
    return {pid for pid in below if not any(helper in commands.get(pid, b"") for helper in helpers)}


@pytest.mark.parametrize("world_size", WORLD_SIZES)
def test_shards_are_distributed_samplers(site, as_script, world_size):
    """The page's sums of what its processes reported, against DistributedSampler's shares."""
    dataset = as_script["dataset"]
    per_process = len(DistributedSampler(dataset, num_replicas=world_size, rank=0))
    assert (per_process, world_size * per_process - len(dataset)) == EXPECTED_SHARDS[world_size]
    per_process, repeated = EXPECTED_SHARDS[world_size]
    counts = " + ".join([str(per_process)] * world_size)
    summary = f"samples: {counts} = {world_size * per_process}, {len(dataset)} distinct, {repeated} repeated"
    step = math.ceil(as_script["batch_size"] / world_size)
    batches = [world_size * min(step, per_process - i) for i in range(0, per_process, step)]
    lines = printed_lines(site, EXAMPLE.stem)
    at = lines.index(summary)  # the run's lines, after its own heading
    assert lines[at - 1].startswith(f"# {world_size} process")
    assert lines[at + 1] == "global batches: " + ", ".join(map(str, batches))


@pytest.mark.parametrize("world_size", WORLD_SIZES)
def test_one_ddp_step_equals_one_process(site, world_size):
    plural = "es" if world_size > 1 else ""
    line = f"{world_size} process{plural}: ranks identical: True, equal to one process: True"
    assert line in printed_lines(site, EXAMPLE.stem)


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


def test_timeout_stops_a_hung_rendezvous(as_script):
    before = ranks_left()  # other tests may keep helpers (a browser) alive
    start = time.monotonic()
    with pytest.raises(TimeoutError, match=r"rank\(s\) \[0, 1\] still running after 2 s"):
        as_script["launch"](2, hang_rank_1, timeout=2)
    assert time.monotonic() - start < 6
    assert ranks_left() - before == set()


def test_failing_rank_raises_its_error(as_script):
    before = ranks_left()
    start = time.monotonic()
    with pytest.raises(ProcessRaisedException, match="rank 1 gave up") as raised:
        as_script["launch"](2, fail_rank_1, timeout=60)
    assert raised.value.error_index == 1
    assert time.monotonic() - start < 10
    assert ranks_left() - before == set()


def report_rank():
    print("rank", os.environ["RANK"], "of", os.environ["WORLD_SIZE"])
    return int(os.environ["RANK"]) * 10


def test_launch_returns_output_and_value_in_rank_order(as_script):
    before = ranks_left()
    results = as_script["launch"](3, report_rank)
    assert results == [(f"rank {r} of 3\n", r * 10) for r in range(3)]
    assert ranks_left() - before == set()


def test_uneven_batches_time_out_without_join_and_finish_with_it(site):
    lines = printed_lines(site, EXAMPLE.stem)
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


def test_ddp_copies_rank_0_buffers_at_a_forward_with_grad(as_script):
    results = [value for _, value in as_script["launch"](2, buffers_after_forward)]
    assert results == [(0.0, 10.0), (0.0, 10.0)]  # rank 1's 1 and 11 were overwritten


def join_without_local_rank():
    """init_process_group reads RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT only."""
    del os.environ["LOCAL_RANK"]
    if os.environ["RANK"] == "1":
        time.sleep(2)
    start = time.monotonic()
    dist.init_process_group("gloo")
    waited = time.monotonic() - start
    leave_together()
    return waited


def leave_together():
    """Destroy the group once every process has joined it.

    init_process_group is no barrier: a process may return from it while
    gloo still connects its peers to each other, and one that left at once
    closed its sockets under them ("Gloo connectFullMesh failed ...
    Connection closed by peer"; 10 of 40 runs on 2 cores kept busy by 8
    loops, none with the barrier)."""
    dist.barrier()
    dist.destroy_process_group()


def test_gloo_init_waits_for_every_process_and_ignores_local_rank(as_script):
    waited = [value for _, value in as_script["launch"](2, join_without_local_rank)]
    assert waited[0] >= 1.5  # rank 0 waited for rank 1 to connect


# -- GPUs: which device each process takes, and no copy of a process that used one --


def page(path):
    """An example's definitions (no cell that does work runs)."""
    return runpy.run_path(str(path), run_name="definitions")


@pytest.mark.parametrize("example", LAUNCHING, ids=lambda p: p.stem)
@pytest.mark.parametrize("gpus", [0, 1, 2, 8])
def test_each_process_takes_its_own_gpu_only_when_there_is_one_for_each(example, gpus, monkeypatch):
    device_for_this_process = page(example)["device_for_this_process"]
    monkeypatch.setattr(torch.cuda, "device_count", lambda: gpus)
    for processes in (1, 2, 3, 8):
        monkeypatch.setenv("LOCAL_WORLD_SIZE", str(processes))
        chosen = []
        for rank in range(processes):
            monkeypatch.setenv("LOCAL_RANK", str(rank))
            chosen.append(device_for_this_process())
        if gpus >= processes:  # NCCL: one GPU per process, never two on one
            assert chosen == [torch.device("cuda", rank) for rank in range(processes)]
        else:
            assert chosen == [torch.device("cpu")] * processes


def decisions(path):
    """The code of *path* that decides where a process runs and how processes start, as text."""
    functions = {
        node.name: node
        for node in ast.parse(path.read_text("utf-8")).body
        if isinstance(node, ast.FunctionDef)
    }
    fallback = [
        node
        for node in ast.walk(functions["run_rank"])
        if isinstance(node, ast.If) and "gpus" in ast.unparse(node.test)
    ]
    chosen = [functions["device_for_this_process"], functions["start_method"], *fallback]
    return "\n".join(ast.unparse(node) for node in chosen).replace(path.name, "PAGE")


def test_the_four_pages_decide_where_processes_run_and_start_alike():
    """Each page is a script of its own, so this code is written four times: it must not drift."""
    assert len({decisions(path) for path in LAUNCHING}) == 1, [decisions(path) for path in LAUNCHING]


def notebook(monkeypatch, namespace):
    """Make *namespace*'s process look like a notebook's: a ``__main__`` without a file."""
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
    return namespace["start_method"]


@pytest.mark.parametrize("example", LAUNCHING, ids=lambda p: p.stem)
def test_the_launcher_copies_no_notebook_on_a_machine_with_gpus(example, monkeypatch):
    """A notebook's first cell, torch.cuda.is_available(), poisons fork and leaves
    is_initialized() False; so does a backward pass there, for autograd, even on the
    CPU. Neither shows, so on a machine with GPUs the launcher copies no notebook."""
    namespace = page(example)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    monkeypatch.setitem(sys.modules, "__main__", types.SimpleNamespace(__file__=str(example)))
    assert namespace["start_method"]() == "forkserver"  # a script: a clean fork server
    start_method = notebook(monkeypatch, namespace)
    assert start_method() == "fork"  # a notebook on a machine without GPUs: copies of it
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)  # is_initialized() stays False
    with pytest.raises(
        RuntimeError,
        match=r"this machine has GPUs.*torch\.cuda\.is_available\(\)"
        r".*run this tutorial as a script",
    ):
        start_method()
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    monkeypatch.setattr(torch.multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    with pytest.raises(RuntimeError, match="run this tutorial as a script"):
        start_method()


def fake_gpus(monkeypatch, count=1):
    """A machine with *count* GPUs, as torch sees it: NVML's count and is_available() honour
    CUDA_VISIBLE_DEVICES, and anything that would open a CUDA context raises."""

    def visible():
        return 0 if os.environ.get("CUDA_VISIBLE_DEVICES") == "" else count

    def context(*args, **kwargs):
        raise AssertionError("a CPU process opened a CUDA context")

    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)  # put back as it was after the test
    monkeypatch.setattr(torch.cuda, "device_count", visible)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: visible() > 0)
    for name in ("current_stream", "set_device", "init", "_lazy_init", "synchronize"):
        monkeypatch.setattr(torch.cuda, name, context)


def one_process_of(processes, monkeypatch):
    """Make this process rank 0 of a group of one, on a machine said to run *processes*."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    for name, value in dict(
        RANK="0",
        LOCAL_RANK="0",
        WORLD_SIZE="1",
        LOCAL_WORLD_SIZE=str(processes),
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
    ).items():
        monkeypatch.setenv(name, value)


def what_this_process_sees():
    return os.environ.get("CUDA_VISIBLE_DEVICES"), torch.cuda.is_available(), torch.cuda.device_count()


@pytest.mark.parametrize("example", LAUNCHING, ids=lambda p: p.stem)
def test_a_process_that_falls_back_to_the_cpu_hides_the_gpus_first(example, monkeypatch, capsys):
    """2 processes on a 1-GPU machine: each uses the CPU and gloo, and no GPU: anything that
    asks is_available() (DCP's save, DeviceMesh) must find none, or it opens a context on GPU 0."""
    run_rank = page(example)["run_rank"]
    fake_gpus(monkeypatch, count=1)
    one_process_of(2, monkeypatch)
    if "plot_03" in example.name:  # run_rank(batch size) trains; look instead
        monkeypatch.setitem(run_rank.__globals__, "train", lambda *args: what_this_process_sees())
        seen = run_rank(15)
    else:
        seen = run_rank(what_this_process_sees)
    assert seen == ("", False, 0)
    assert "2 processes on this machine and 1 GPU: NCCL needs a GPU per process" in capsys.readouterr().out


def test_the_fsdp2_page_saves_its_checkpoint_in_the_fallback_without_a_gpu(monkeypatch, tmp_path):
    """DCP's save uses a CUDA stream whenever is_available() says True (torch 2.13,
    FileSystemWriter's _OverlappingCpuLoader): with the GPUs hidden it uses none."""
    fsdp = page(LAUNCHING[2])
    fake_gpus(monkeypatch, count=1)
    one_process_of(2, monkeypatch)
    record = fsdp["run_rank"](fsdp["recipe"], str(tmp_path), torch.bfloat16, None, 1, (1,))
    assert sorted(record["losses"]) == [1]
    assert sorted(p.name for p in (tmp_path / "step-1").iterdir()) == [".metadata", "__0_0.distcp"]


def parent_pid():
    """This process's parent; inside plot_04's and plot_05's run_rank, once every process joined."""
    if dist.is_initialized():
        dist.barrier()  # a process that left at once could close its sockets under a joining peer
    return os.getppid()


@pytest.mark.parametrize("example", LAUNCHING, ids=lambda p: p.stem)
def test_the_launcher_never_forks_a_process_that_ran_a_backward_pass(example):
    """On a GPU machine a copy of such a process fails at its first backward pass."""
    with loaded_as_script(example) as namespace:
        torch.ones(1, requires_grad=True).sum().backward()  # as plot_01 does before, in the build
        example_guard.guard_forks("this test", "import torch")
        try:
            args = (parent_pid, ()) if "plot_03" in example.name else (parent_pid,)
            reports = namespace["launch"](2, *args)
        finally:
            example_guard.stop_guarding()
    parents = {report[1] for report in reports}
    assert os.getpid() not in parents and len(parents) == 1  # all from one fork server


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
        subprocess.Popen(
            [*torchrun, "--nproc-per-node=2", f"--log-dir={log}", "--redirects=3", str(script), str(EXAMPLE)],
            cwd=tmp_path,
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for log in logs
    ]
    launcher = [job.communicate(timeout=240)[0] for job in jobs]
    ranks = [sorted(log.rglob("stdout.log")) for log in logs]
    outputs = [[path.read_text() for path in paths] for paths in ranks]
    assert [job.returncode for job in jobs] == [0, 0], (launcher, outputs)
    assert [len(paths) for paths in ranks] == [2, 2], ranks
    ports = [{m for out in job for m in re.findall(r"^port (\d+)$", out, re.M)} for job in outputs]
    assert all(len(p) == 1 for p in ports) and ports[0] != ports[1], ports
    assert "29500" not in ports[0] | ports[1]
    gpus = torch.cuda.device_count()  # 2 or more: each rank on a GPU of its own, with NCCL
    for job in outputs:
        for rank, out in enumerate(job):
            where = f"nccl on cuda:{rank}" if gpus >= 2 else "gloo on cpu"
            assert out.count(f"{where}: 50 of 100 samples") == 1, out
