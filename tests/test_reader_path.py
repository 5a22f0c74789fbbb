"""The reader's path (issue 29): short main paths, folded machinery, and each corrected claim.

The tutorials lead with what the reader came for; the code that only
produces their outputs sits in collapsed sections (conf/extensions/
collapsed_sections.py, checked on the fixture project tests/roots/
collapsed-sections). Each sentence the issue corrected is checked twice
where the page demonstrates it: against what the page printed while it was
built, and against torch itself.
"""

import datetime
import importlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch
import torch._dynamo  # noqa: F401  before any process group: DDP imports it (see plot_03)
import torch.distributed as dist
import torch.nn as nn
from bs4 import BeautifulSoup
from conftest import loaded_as_script, printed_lines, sphinx_build

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
IN_DEPTH = EXAMPLES / "plot_02_dataparallel_in_depth.py"
DDP_PAGE = EXAMPLES / "plot_03_distributed_data_parallel.py"
FIXTURE = Path(__file__).resolve().parent / "roots" / "collapsed-sections"
# The budget for the first tutorial's main path.
FIRST_PAGE_CODE_LINES = 100

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="the page's launcher forks")


def page(site, name, lang="en"):
    """The parsed article of a built tutorial page."""
    html = (site / lang / "auto_examples" / f"{name}.html").read_text("utf-8")
    return BeautifulSoup(html, "html.parser").find("article")


def code_blocks(article, collapsed):
    """The text of the page's code blocks (not outputs), outside or inside collapsed sections."""
    blocks = []
    for pre in article.select("div.highlight pre"):
        if pre.find_parent(class_="sphx-glr-script-out"):
            continue
        if (pre.find_parent("details") is not None) == collapsed:
            blocks.append(pre.get_text().removesuffix("\n"))
    return blocks


@pytest.fixture(scope="module")
def ddp():
    """The DDP tutorial's definitions, as its launcher's processes load them; no cell runs."""
    with loaded_as_script(DDP_PAGE) as namespace:
        yield namespace


# -- The collapsed sections -----------------------------------------------------


def build_fixture(tmp_path, builder):
    """Build the fixture project with ``builder``; return the output folder."""
    out = tmp_path / builder
    result = sphinx_build("-b", builder, "-W", "-q", "-d", tmp_path / f"doctrees-{builder}", FIXTURE, out)
    assert result.returncode == 0, result.stderr
    return out


def test_a_collapsed_section_is_a_closed_dropdown_titled_by_the_section(tmp_path):
    soup = BeautifulSoup((build_fixture(tmp_path, "html") / "index.html").read_text("utf-8"), "html.parser")
    details = soup.find_all("details")
    assert len(details) == 1 and not details[0].has_attr("open")
    folded = details[0]
    first_child = next(child for child in folded.children if getattr(child, "name", None))
    assert first_child.name == "summary"  # HTML allows nothing before it
    assert first_child.get_text(strip=True) == "How the page works"
    assert "The body of the folded section." in folded.get_text()
    assert 'print("folded")' in folded.get_text()
    assert "How the page works" not in [h.get_text(strip=True) for h in soup.find_all("h2")]
    link = soup.find("a", href=re.compile("#how-it-works$"))
    assert link is not None and folded.find(id="how-it-works") is not None
    results = [h for h in soup.find_all("h2") if "Results" in h.get_text()]
    assert len(results) == 1 and not results[0].find_parent("details")


def test_a_collapsed_section_stays_an_open_section_offline(tmp_path):
    out = build_fixture(tmp_path, "epub")
    text = (out / "index.xhtml").read_text("utf-8")
    assert "<details" not in text and "sd-dropdown" not in text
    soup = BeautifulSoup(text, "html.parser")
    assert any("How the page works" in h.get_text() for h in soup.find_all("h2"))
    assert 'print("folded")' in soup.get_text()


# -- The pages' main paths ------------------------------------------------------------


def test_first_tutorial_leads_with_the_classic_script_in_100_lines(site):
    article = page(site, "plot_01_dataparallel")
    main = code_blocks(article, collapsed=False)
    assert sum(len(block.split("\n")) for block in main) <= FIRST_PAGE_CODE_LINES
    assert any("model = nn.DataParallel(model)" in block for block in main)
    assert any(block.startswith("observed[8] = run_on(8)") for block in main)
    folded = "\n".join(code_blocks(article, collapsed=True))
    assert "class EmulatedDataParallel" in folded and "def run_on" in folded
    assert not any("EmulatedDataParallel" in block for block in main)
    # The results come straight after the classic script and the folded emulation.
    names = [
        el.name
        for el in article.find_all(["details", "div"])
        if el.name == "details" or "gpu-tab-set" in el.get("class", [])
    ]
    assert names[:2] == ["details", "div"]


def test_ddp_page_teaches_torchrun_and_mp_spawn_and_folds_the_build_launcher(site):
    article = page(site, "plot_03_distributed_data_parallel")
    main = "\n".join(code_blocks(article, collapsed=False))
    folded = "\n".join(code_blocks(article, collapsed=True))
    assert "torchrun --standalone --nproc-per-node=N" in main
    assert "mp.spawn(spawned_rank" in main
    for internal in ("TORCHELASTIC_USE_AGENT_STORE", "start_method", "set_num_threads"):
        assert internal not in main, internal
        assert internal in folded, internal
    assert "def launch(" in folded and "def launch(" not in main


# -- plot_02: the idle bound and BatchNorm ------------------------------------------------


def test_the_page_computes_the_idle_bound(site):
    printed = printed_lines(site, "plot_02_dataparallel_in_depth")
    assert "8 GPUs: largest batch that leaves a GPU idle: 49" in printed
    assert "each one is (N - 1) ** 2: True" in printed


def test_batchnorm_fails_only_with_one_value_per_channel(site):
    for shape in ((1, 3), (1, 3, 1, 1)):
        norm = nn.BatchNorm1d(3) if len(shape) == 2 else nn.BatchNorm2d(3)
        with pytest.raises(ValueError, match="more than 1 value per channel"):
            norm(torch.randn(*shape))
    nn.BatchNorm1d(3)(torch.randn(1, 3, 4))  # one sequence of 4 steps: 4 values
    nn.BatchNorm2d(3)(torch.randn(1, 3, 8, 8))  # one image: 64 values per channel
    printed = printed_lines(site, "plot_02_dataparallel_in_depth")
    assert "BatchNorm2d on one 3 × 8 × 8 image: output (1, 3, 8, 8)" in printed
    assert any(
        line.startswith("BatchNorm2d on one 3 × 1 × 1 image: Expected more than 1 value") for line in printed
    )


# -- plot_03: buffers, join, the store, the variables -----------------------------------


def test_buffers_are_not_copied_at_the_forward_after_an_evaluation_pass(site):
    printed = printed_lines(site, "plot_03_distributed_data_parallel")
    assert [line for line in printed if line.startswith("forward ")] == [
        "forward 1 (training  ): rank 0 has 10, rank 1 has 10: copied from rank 0",
        "forward 2 (evaluation): rank 0 has 20, rank 1 has 20: copied from rank 0",
        "forward 3 (training  ): rank 0 has 30, rank 1 has 31: its own",  # after the evaluation
        "forward 4 (training  ): rank 0 has 40, rank 1 has 40: copied from rank 0",
    ]


def test_forward_sync_buffers_and_broadcast_buffers_differ_at_wrap_time(site):
    """And only ``broadcast_buffers`` is deprecated: the page shows the warnings DDP gave."""
    printed = "\n".join(printed_lines(site, "plot_03_distributed_data_parallel"))
    assert re.search(r"^\(default\) +0 +10$", printed, re.M)
    assert re.search(r"^forward_sync_buffers=False +0 +11$", printed, re.M)
    assert re.search(r"^broadcast_buffers=False +1 +11$", printed, re.M)
    assert "\n(default): no FutureWarning\n" in printed
    assert "\nforward_sync_buffers=False: no FutureWarning\n" in printed
    assert re.search(r"^broadcast_buffers=False: `broadcast_buffers` is deprecated\.", printed, re.M)


def uneven_scales(divide_by_initial_world_size):
    """Rank 0 trains one batch more under join(); its gradient per step over its own."""
    dist.init_process_group("gloo")
    try:
        model = nn.parallel.DistributedDataParallel(nn.Linear(5, 2))
        alone = nn.Linear(5, 2)
        alone.load_state_dict(model.module.state_dict())
        batch, scales = torch.randn(4, 5, generator=torch.Generator().manual_seed(0)), []
        with model.join(divide_by_initial_world_size=divide_by_initial_world_size):
            for _ in range(3 if dist.get_rank() == 0 else 2):
                model.zero_grad()
                model(batch).pow(2).mean().backward()
                own = torch.autograd.grad(alone(batch).pow(2).mean(), alone.weight)[0]
                averaged = model.module.weight.grad
                scales.append(round((torch.sum(averaged * own) / torch.sum(own * own)).item(), 4))
        del model
        return scales
    finally:
        dist.destroy_process_group()


@linux_only
def test_under_join_the_last_step_is_scaled_by_the_processes_still_training(site, ddp):
    halved = ddp["launch"](2, uneven_scales, (True,))[0][1]
    assert halved == [1.0, 1.0, 0.5]
    kept = ddp["launch"](2, uneven_scales, (False,))[0][1]
    assert kept == [1.0, 1.0, 1.0]  # the page's divide_by_initial_world_size=False sentence
    page_run = ddp["launch"](2, ddp["run_uneven"], (True,))[0][1][1]
    assert [round(scale, 4) for scale in page_run] == [1.0, 1.0, 0.5]
    printed = printed_lines(site, "plot_03_distributed_data_parallel")
    assert "rank 0's gradient at each step, as a multiple of its own: 1.00, 1.00, 0.50" in printed


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_with_env_init_rank_0_hosts_the_store_and_waits_for_every_rank(monkeypatch, site):
    monkeypatch.delenv("TORCHELASTIC_USE_AGENT_STORE", raising=False)
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", str(free_port()))
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(dist.DistStoreError, match="waiting for clients. 1/2 clients joined"):
        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=1))
    assert not dist.is_initialized()
    printed = printed_lines(site, "plot_03_distributed_data_parallel")
    assert "rank 0's store: Timed out waiting for clients. 1/3 clients joined." in printed


PRINT_ENV = """
import json, os, subprocess, sys
if os.environ["RANK"] == "0":
    child = subprocess.run([sys.executable, "-c", "import os; print(os.environ.get('OMP_NUM_THREADS'))"],
                           capture_output=True, text=True).stdout.strip()
    print(json.dumps({"env": dict(os.environ), "child_omp": child}))
"""


@linux_only
def test_torchrun_sets_more_variables_than_the_pages_launcher(tmp_path, ddp):
    script = tmp_path / "print_env.py"
    script.write_text(PRINT_ENV)
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("PET_", "MASTER_", "OMP_", "TORCHELASTIC_"))
    }
    result = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node=2", str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    torchrun = json.loads(result.stdout.strip().splitlines()[-1])
    named = (
        "RANK",
        "LOCAL_RANK",
        "WORLD_SIZE",
        "MASTER_ADDR",
        "MASTER_PORT",
        "LOCAL_WORLD_SIZE",
        "GROUP_RANK",
        "ROLE_RANK",
        "TORCHELASTIC_RUN_ID",
    )
    assert all(name in torchrun["env"] for name in named)
    assert torchrun["env"]["TORCHELASTIC_USE_AGENT_STORE"] == "True"
    assert torchrun["env"]["OMP_NUM_THREADS"] == "1" and torchrun["child_omp"] == "1"

    saved = os.environ.pop("OMP_NUM_THREADS", None)
    try:
        (_, (page_env, threads, child_omp)), _ = ddp["launch"](2, launched)
    finally:
        if saved is not None:
            os.environ["OMP_NUM_THREADS"] = saved
    assert {"GROUP_RANK", "ROLE_RANK", "TORCHELASTIC_RUN_ID"}.isdisjoint(page_env)
    assert all(name in page_env for name in named[:6])
    # set_num_threads(1) limits torch in that process; unlike OMP_NUM_THREADS=1,
    # nothing of it reaches a program the process starts.
    assert threads == 1 and "OMP_NUM_THREADS" not in page_env and child_omp == "None"


def launched():
    """What a process the page's launcher started sees: its variables, its threads, a child's."""
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.environ.get('OMP_NUM_THREADS'))"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    return dict(os.environ), torch.get_num_threads(), child


class FakeCuda:
    """A device handle with no current device, recording what init_device_mesh sets."""

    def __init__(self):
        self.set = []

    def is_initialized(self):
        return False

    def set_device(self, index):
        self.set.append(index)

    def device_count(self):
        return 8


@pytest.mark.parametrize("local_rank", ["3", None])
def test_init_device_mesh_reads_local_rank(monkeypatch, site, local_rank):
    """What the DDP page says of it, checked against this torch with 8 stand-in GPUs: a CPU
    build cannot run CUDA, and the page cannot compute it."""
    said = " ".join(page(site, "plot_03_distributed_data_parallel").get_text().split())
    assert (
        "and so does init_device_mesh (the device mesh of FSDP2 and tensor parallelism), which"
        " makes cuda:LOCAL_RANK the current device when CUDA has not yet been initialised"
    ) in said
    device_mesh = importlib.import_module("torch.distributed.device_mesh")
    fake, real = FakeCuda(), device_mesh._get_device_handle
    monkeypatch.setattr(
        device_mesh, "_get_device_handle", lambda kind="cuda": fake if kind == "cuda" else real(kind)
    )
    if local_rank is None:
        monkeypatch.delenv("LOCAL_RANK", raising=False)
    else:
        monkeypatch.setenv("LOCAL_RANK", local_rank)
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # without LOCAL_RANK it warns and guesses
            device_mesh.init_device_mesh("cuda", (1,))
    finally:
        dist.destroy_process_group()
    assert fake.set == ([3] if local_rank else [0])  # without it: global rank % 8


@linux_only
def test_the_mp_spawn_way_trains_as_the_page_says(tmp_path):
    """``python plot_03_distributed_data_parallel.py 2``: mp.spawn and public API only."""
    script = tmp_path / DDP_PAGE.name
    shutil.copy(DDP_PAGE, script)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PET_", "MASTER_", "TORCHELASTIC_")) and k not in ("RANK", "LOCAL_RANK")
    }
    result = subprocess.run(
        [sys.executable, str(script), "2"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count("gloo on cpu: 50 of 100 samples") == 2, result.stdout[-3000:]
    assert "# 1 process" not in result.stdout  # it stopped before the page's own runs
