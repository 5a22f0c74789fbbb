"""The FSDP2-at-scale tutorial (plot_06): what its executed page shows, held to torch.

The checks read the outputs the build executed (``docs/auto_examples/``, after
the session's build) and compare each number with what the model's shapes
make it, or with torch itself: the parameters a process holds gathered after
the forward for each ``reshard_after_forward``, what prefetching adds as each
block starts, rank 0's memory with and without the whole state dict, where
HSDP places a weight. A few tests run the page's own functions, and the
page once under ``torchrun``, as its readers start it.
"""

import math
import re
import subprocess
import sys

import pytest
from conftest import loaded_as_script
from test_training import GALLERY, ROOT, blocks_after, header, on_the_cpu

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")

PAGE = "plot_06_fsdp2_at_scale"

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the examples fork")


@pytest.fixture(scope="module")
def executed(site):
    """The session's build executed the examples (the ``site`` fixture builds)."""
    assert (GALLERY / f"{PAGE}.rst").is_file()
    return GALLERY


@pytest.fixture(scope="module")
def page():
    """plot_06's definitions, as its launcher's processes load them (no cell that does work)."""
    with loaded_as_script(ROOT / "examples" / f"{PAGE}.py") as namespace:
        yield namespace


def numbers(text):
    """The integers in *text*, thousands separators and all."""
    return [int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*", text)]


def sizes(page):
    """{parameter name: shape} of the page's model, and the names of the root group's."""
    shapes = {name: tuple(p.shape) for name, p in page["Net"]().named_parameters()}
    root = [name for name in shapes if not name.startswith("blocks.")]
    return shapes, root


def test_one_process_writes_the_seed_and_four_measure(executed):
    seed, measured = blocks_after(PAGE, "Results")
    assert seed[0] == header(1)
    assert seed[1] == "[rank 0] wrote the seed checkpoint seed: .metadata, __0_0.distcp"
    assert measured[0] == header(4)
    assert measured[-1] == "(ranks 1 to 3 printed nothing)"


def section(title):
    """The lines rank 0 logged under ``-- title`` in the 4-process result, without their tag."""
    _, measured = blocks_after(PAGE, "Results")
    lines = [line.removeprefix("[rank 0] ") for line in measured[1:]]
    start = lines.index(f"-- {title}")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("-- ")), len(lines))
    return lines[start + 1 : end]


def test_only_rank_0_holds_the_whole_state_dict_and_the_seed_spares_it(executed, page):
    shapes, _ = sizes(page)
    whole = 4 * sum(math.prod(s) for s in shapes.values())
    lines = section("starting values")
    assert lines[0].startswith(f"the whole state dict: {whole:,} bytes;")
    (from_rank0,) = [numbers(x) for x in lines if x.startswith("from rank 0 ")]
    (from_seed,) = [numbers(x) for x in lines if x.startswith("from the seed checkpoint ")]
    from_rank0 = from_rank0[1:]  # the 0 of "rank 0" first
    largest = 4 * max(math.prod(s) for s in shapes.values())
    pieces = [
        4
        * sum(
            math.prod(torch.zeros(s).chunk(4)[r].shape) if r < len(torch.zeros(s).chunk(4)) else 0
            for s in shapes.values()
        )
        for r in range(4)
    ]
    assert len(from_rank0) == len(from_seed) == 4
    slack = 4096  # DCP's and the collectives' small buffers, which vary a little from run to run
    assert whole <= from_rank0[0] <= whole + pieces[0] + largest + slack  # the whole state dict
    for rank in range(1, 4):  # its pieces and, as it arrives, one whole tensor at a time
        assert largest <= from_rank0[rank] <= pieces[rank] + largest + slack
    for rank in range(4):  # the seed: no process holds the whole, rank 0 included
        assert largest <= from_seed[rank] <= pieces[rank] + largest + slack
    assert from_seed[0] < from_rank0[0] - whole + largest + slack
    assert lines[-1] == "the two ways give the same values: largest difference 0.0e+00"


def test_what_a_process_holds_gathered_after_the_forward_follows_the_choice(executed, page):
    """True: the root group only (it keeps its parameters, FSDP2's default for the root);
    False: the whole model; 2: the blocks over 2 processes of 4, and the root."""
    shapes, root = sizes(page)
    whole = sum(math.prod(s) for s in shapes.values())
    at_root = sum(math.prod(shapes[name]) for name in root)
    lines = section("resharding after the forward")
    held = {line.split()[0]: numbers(line)[-1 if on_the_cpu(4) else -2] for line in lines[1:]}
    assert held == {"True": 2 * at_root, "False": 2 * whole, "2": 2 * at_root + (whole - at_root)}


def test_prefetching_holds_one_more_block_for_each_block_ahead(executed, page):
    shapes, _ = sizes(page)
    block = 2 * sum(math.prod(s) for name, s in shapes.items() if name.startswith("blocks.0."))
    lines = section("prefetching")
    (forward,) = [numbers(x) for x in lines if x.startswith("forward ")]
    (backward,) = [numbers(x) for x in lines if x.startswith("backward ")]
    # 2 ahead: two more blocks' all-gathers in the forward while two are left, and in the
    # backward, where FSDP2 already gathers the next block, one more while one is left
    assert forward == [2 * block, 2 * block, block, 0]
    assert backward == [0, 0, block, block]


def test_hsdp_shards_within_a_node_and_replicates_across(executed):
    lines = section("all together")
    assert lines[0] == (
        "HSDP, a mesh of 2 × 2: blocks.0.up.weight (256, 64), placed (Replicate(), Shard(dim=0))"
    )
    for rank in range(4):
        node, piece, twin = rank // 2, rank % 2, (rank + 2) % 4
        assert lines[1 + rank] == (
            f"rank {rank}: node {node}, piece {piece}, (128, 64); the same values as rank {twin}: True"
        )
    at_scale = [x for x in lines if x.startswith("losses, HSDP with checkpointing")]
    plain = [x for x in lines if x.startswith("losses, FSDP2 as in the FSDP2 tutorial")]
    (difference,) = [x for x in lines if x.startswith("largest difference")]
    backend = "aot_eager" if on_the_cpu(4) else "inductor"
    assert len(at_scale) == len(plain) == 1 and f", {backend} and prefetching" in at_scale[0]
    losses = [float(n) for n in at_scale[0].split(": ")[1].split(", ")]
    assert len(losses) == 3 and losses[-1] < losses[0]
    assert float(difference.split()[-1]) < 1e-2  # bfloat16 rounding at most


def compiled_graphs(recompute):
    """Compile the page's model in a process group of one; return the graphs TorchDynamo made
    and the operations in them."""
    d = sys.modules["__mp_main__"].__dict__
    graphs = []

    def backend(graph, inputs):
        graphs.append(graph)
        return graph.forward

    torch._dynamo.reset()
    cpu = torch.device("cpu")
    model = d["sharded_model"](d["flat_mesh"](cpu), cpu, recompute=recompute, backend=backend)
    d["from_rank0"](model)
    x, y = torch.randn(6, 2), torch.tensor([0, 1, 2, 0, 1, 2])
    torch.nn.functional.cross_entropy(model(x), y).backward()
    return len(graphs), {str(n.target) for g in graphs for n in g.graph.nodes if n.op == "call_function"}


@pytest.mark.parametrize("recompute", [False, True])
def test_the_blocks_share_one_compiled_graph_and_fsdp2s_hooks_stay_out(page, recompute):
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        count, operations = compiled_graphs(recompute)
    finally:
        dist.destroy_process_group()
    assert count == 1  # page["DEPTH"] blocks, one graph
    assert not [op for op in operations if "c10d" in op or "fsdp" in op.lower()], operations


def test_the_seed_checkpoint_is_written_by_one_process_only(page, tmp_path):
    with pytest.raises(Exception, match="a seed checkpoint is written by one process, not 2"):
        page["launch"](2, page["write_seed"], str(tmp_path / "seed"))
    assert not (tmp_path / "seed").exists()


def torchrun(cwd, processes):
    """``torchrun --standalone --nproc-per-node=N`` on the page in *cwd*: (exit code, output)."""
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc-per-node={processes}",
        str(ROOT / "examples" / f"{PAGE}.py"),
    ]
    done = subprocess.run(
        command, cwd=cwd, text=True, timeout=300, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    assert "terminate called" not in done.stdout
    return done.returncode, done.stdout


def test_under_torchrun_one_process_writes_the_seed_then_more_train_from_it(tmp_path):
    code, output = torchrun(tmp_path, 2)  # no seed yet: more than one process only says how
    assert code != 0
    assert (
        "no seed checkpoint in fsdp2-at-scale/seed: write it with one process first, torchrun"
        " --nproc-per-node=1 plot_06_fsdp2_at_scale.py"
    ) in output
    code, output = torchrun(tmp_path, 1)
    assert code == 0 and "wrote the seed checkpoint seed: .metadata, __0_0.distcp" in output
    code, output = torchrun(tmp_path, 2)
    assert code == 0, output[-4000:]
    where = "gloo on cpu" if on_the_cpu(2) else None
    for rank in range(2):
        assert f"rank {rank}: {where or f'nccl on cuda:{rank}'}" in output
    assert "HSDP on 1 × 2 processes, activation checkpointing" in output
    losses = [float(x) for x in re.findall(r"step \d: loss (\d+\.\d+)", output)]
    assert len(losses) == 3 and losses[-1] < losses[0], output[-2000:]
