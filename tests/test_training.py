"""The training tutorials (DDP end to end, FSDP2): what their executed pages show.

The checks read the outputs the build executed (``docs/auto_examples/*.rst``,
after the session's build) and hold them to what the pages claim: the runs
with 1, 2, 3 and 8 processes agree, the resumed run continues the stopped
one, accumulation equals the whole batch, FSDP2 equals one process. A few
tests run the examples' own functions on small jobs, and each page once
under ``torchrun``, as its readers start it.
"""

import ast
import contextlib
import math
import os
import re
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import loaded_as_script

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parent.parent
GALLERY = ROOT / "docs" / "auto_examples"
DDP_PAGE = "plot_04_train_with_ddp"
FSDP_PAGE = "plot_05_fsdp2"
AT_SCALE = "plot_06_fsdp2_at_scale"  # its own tests: test_fsdp2_at_scale.py
DDP_SIZES = (1, 2, 3, 8)
FSDP_SIZES = (2, 4)
HELD_OUT = 500
EPOCHS = 4
GLOBAL_BATCH = 240
NUMBER = r"(\d+\.\d+(?:e[-+]\d+)?)"

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the examples fork")


def outputs(example):
    """Every output block of the executed page, as (heading above it, its lines)."""
    lines = (GALLERY / f"{example}.rst").read_text("utf-8").splitlines()
    found, heading, i = [], None, 0
    while i < len(lines):
        line = lines[i]
        under = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and under and set(under) <= set("=-^~") and len(under) >= len(line):
            heading = line
        if line == ".. rst-class:: sphx-glr-script-out":
            i += 4  # blank, " .. code-block:: none", blank
            block = []
            while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
                block.append(lines[i][4:])
                i += 1
            found.append((heading, [b for b in block if b.strip()]))
            continue
        i += 1
    return found


def header(world_size):
    """A result's first line, as the examples print it on this machine (a process per GPU with
    NCCL where there are enough, else the CPU); conf/extensions/result_headers.py reads it."""
    processes = f"{world_size} process{'es' if world_size > 1 else ''}"
    if torch.cuda.device_count() >= world_size:
        names = ", ".join(sorted({torch.cuda.get_device_name(i) for i in range(world_size)}))
        return f"# {processes} on {world_size} × {names} (nccl)"
    return f"# {processes} on the CPU (gloo)"


def on_the_cpu(world_size):
    """Whether a job of ``world_size`` processes runs on the CPU here (bit for bit repeatable)."""
    return torch.cuda.device_count() < world_size


def tab(example, world_size):
    """The output lines of the result tab for ``world_size`` processes."""
    title = f"{world_size} process{'es' if world_size > 1 else ''}"
    blocks = [block for heading, block in outputs(example) if heading == title]
    assert len(blocks) == 1, (title, blocks)
    return blocks[0]


def blocks_after(example, heading):
    """The output blocks under ``heading``."""
    return [block for found, block in outputs(example) if found == heading]


def block_after(example, heading):
    """The one output block under ``heading``."""
    blocks = blocks_after(example, heading)
    assert len(blocks) == 1, (heading, blocks)
    return blocks[0]


def epochs(lines):
    """{epoch: (loss, accuracy, points counted)} from rank 0's epoch lines."""
    found = {}
    for line in lines:
        match = re.fullmatch(
            r"\[rank 0\] epoch (\d+): loss " + NUMBER + r", held-out accuracy ([\d.]+)% of (\d+);"
            r" saved epoch-\1\.pt",
            line,
        )
        if match:
            found[int(match[1])] = (float(match[2]), float(match[3]) / 100, int(match[4]))
    return found


@pytest.fixture(scope="module")
def executed(site):
    """The session's build executed the examples (the ``site`` fixture builds)."""
    for page in (DDP_PAGE, FSDP_PAGE, AT_SCALE):
        assert (GALLERY / f"{page}.rst").is_file(), page
    return GALLERY


# -- plot_04: DDP, end to end ---------------------------------------------------


def test_ddp_tabs_are_the_four_process_counts(executed):
    for world_size in DDP_SIZES:
        assert tab(DDP_PAGE, world_size)[0] == header(world_size)
    page = (GALLERY / f"{DDP_PAGE}.rst").read_text("utf-8")
    assert page.index(".. rst-class:: gpu-tabs") < page.index("\n1 process\n^^^^^^^^^\n")


@pytest.mark.parametrize("world_size", DDP_SIZES)
def test_loss_falls_and_accuracy_is_well_above_chance(executed, world_size):
    found = epochs(tab(DDP_PAGE, world_size))
    assert sorted(found) == list(range(1, EPOCHS + 1))
    losses = [found[e][0] for e in sorted(found)]
    assert all(a > b for a, b in zip(losses, losses[1:])), losses
    assert losses[-1] < 0.5 * losses[0]
    assert found[EPOCHS][1] > 0.85  # chance: 1 in 3
    assert {counted for _, _, counted in found.values()} == {HELD_OUT}


@pytest.mark.parametrize("world_size", DDP_SIZES[1:])
def test_every_world_size_trains_like_one_process(executed, world_size):
    one, many = epochs(tab(DDP_PAGE, 1)), epochs(tab(DDP_PAGE, world_size))
    for epoch, (loss, accuracy, _) in one.items():
        assert abs(many[epoch][0] - loss) < 1e-5
        assert many[epoch][1] == accuracy
    first = tab(DDP_PAGE, world_size)[1]
    per_process = GLOBAL_BATCH // world_size
    assert first == (
        f"[rank 0] {world_size} processes, {per_process} samples each per step, global batch"
        f" {GLOBAL_BATCH}, 10 steps per epoch; models: {world_size} different before DDP, 1 after"
    )


def table(example):
    """The comparison table of the DDP page: {row name: [cells]}."""
    block = block_after(example, "What agrees, and what does not")
    assert block[0].split() == ["processes", *map(str, DDP_SIZES)]
    rows = {}
    for line in block[1:]:
        name, cells = line[:40].strip(), line[40:].split()
        rows[name] = cells
    return rows


def test_the_comparison_table_shows_agreement(executed):
    rows = table(DDP_PAGE)
    assert len(set(rows[f"loss, epoch {EPOCHS}"])) == 1
    assert len(set(rows[f"held-out accuracy, epoch {EPOCHS}"])) == 1
    differences = [float(cell) for cell in rows["largest parameter difference from 1"]]
    assert differences[0] == 0 and max(differences) < 1e-5
    assert max(float(cell) for cell in rows["accumulation vs whole batch"]) < 1e-6


@pytest.mark.parametrize("world_size", DDP_SIZES)
def test_only_rank_0_logs(executed, world_size):
    lines = tab(DDP_PAGE, world_size)[1:]
    tagged = [line for line in lines if line.startswith("[rank ")]
    assert tagged and all(line.startswith("[rank 0] ") for line in tagged)
    if world_size == 2:
        assert lines[-1] == "(rank 1 printed nothing)"
    elif world_size > 2:
        assert lines[-1] == f"(ranks 1 to {world_size - 1} printed nothing)"
    else:  # one process: rank 0 is every rank, and nothing is said of others
        assert not any("printed nothing" in line for line in lines), lines


@pytest.mark.parametrize("world_size", DDP_SIZES)
def test_the_sampler_counts_repeated_points_and_evaluate_does_not(executed, world_size):
    lines = tab(DDP_PAGE, world_size)
    padded = math.ceil(HELD_OUT / world_size) * world_size  # 500, 500, 501, 504
    (line,) = [line for line in lines if "through a DistributedSampler" in line]
    assert f": {padded} points counted," in line
    assert epochs(lines)[EPOCHS][2] == HELD_OUT


@pytest.mark.parametrize("world_size", DDP_SIZES)
def test_accumulation_with_no_sync_equals_the_whole_batch(executed, world_size):
    (line,) = [line for line in tab(DDP_PAGE, world_size) if "micro-batches" in line]
    match = re.fullmatch(
        r"\[rank 0\] 5 micro-batches of (\d+) per process: largest difference from the whole"
        r" batch's gradient " + NUMBER + r"; all-reduces: 1 \(whole batch\), 1 \(with no_sync\),"
        r" 5 \(without\)",
        line,
    )
    assert match, line
    assert int(match[1]) * 5 * world_size == GLOBAL_BATCH
    assert float(match[2]) < 1e-6


def test_resume_continues_where_the_run_stopped(executed):
    block = block_after(DDP_PAGE, "Resuming from a checkpoint")
    assert block[0] == header(2)
    uninterrupted = [line for line in tab(DDP_PAGE, 2) if re.match(r"\[rank 0\] epoch [34]:", line)]
    resumed = [line for line in block if re.match(r"\[rank 0\] epoch [34]:", line)]
    assert len(resumed) == 4  # with the optimizer's state, then without
    assert resumed[2:] != uninterrupted
    assert block.count("[rank 0] resumed from epoch-2.pt: 2 epochs done") == 2
    assert not any(re.match(r"\[rank 0\] epoch [12]:", line) for line in block)
    if on_the_cpu(2):  # "On the CPU the resumed run repeats the uninterrupted one bit for bit"
        assert resumed[:2] == uninterrupted  # the same numbers, to the last digit printed
        assert (
            "with the optimizer's state: losses of epochs 3 and 4 equal to the uninterrupted run's:"
            " True; parameters after epoch 4 identical: True"
        ) in block
    else:  # on GPUs, only with deterministic algorithms; otherwise to rounding
        for again, first in zip(epochs(resumed[:2]).values(), epochs(uninterrupted).values()):
            assert abs(again[0] - first[0]) < 1e-4
        assert [line for line in block if line.startswith("with the optimizer's state: losses")]
    (without,) = [line for line in block if line.startswith("without it:")]
    jumped, before = map(
        float, re.fullmatch(r"without it: epoch 3 loss (\S+) instead of (\S+)", without).groups()
    )
    assert jumped > before + 0.01  # "the loss jumps"


def test_bf16_autocast_stays_close_to_float32(executed):
    block = block_after(DDP_PAGE, "Mixed precision: bf16 autocast")
    assert block[0] == header(2)
    assert block[1] == (
        "[rank 0] inside autocast: scores torch.bfloat16, loss torch.float32;"
        " parameters torch.float32, gradients torch.float32"
    )
    bf16, fp32 = epochs(block), epochs(tab(DDP_PAGE, 2))
    assert bf16[EPOCHS] != fp32[EPOCHS]
    assert abs(bf16[EPOCHS][0] - fp32[EPOCHS][0]) < 0.02
    assert bf16[EPOCHS][1] > 0.85


def test_learning_rate_results_match_the_prose(executed):
    block = block_after(DDP_PAGE, "The learning rate when the global batch grows")
    assert block[0] == header(1)  # the one process says where it ran
    found = {}
    for line in block[1:]:
        match = re.fullmatch(
            r"global batch 960, 3 steps per epoch, learning rate ([\d.]+): epoch 4 loss "
            + NUMBER
            + r", held-out accuracy ([\d.]+)%",
            line,
        )
        assert match, line
        found[float(match[1])] = (float(match[2]), float(match[3]) / 100)
    assert sorted(found) == [0.02, 0.04, 0.08]  # unchanged, times the square root of 4, times 4
    small_batch = epochs(tab(DDP_PAGE, 1))[EPOCHS][1]
    unchanged, root, linear = (found[rate] for rate in sorted(found))
    assert unchanged[1] < small_batch - 0.1  # "far less done"
    for scaled in (root, linear):  # "neither rule helps ... the loss ends higher"
        assert scaled[0] > unchanged[0] and scaled[1] < unchanged[1]


def test_collectives_give_every_process_the_same_result(executed):
    block = block_after(DDP_PAGE, "The collective operations used here")
    assert block == [header(3)] + [
        f"[rank {rank}] mine {rank + 1}; broadcast from rank 0: 1; all_reduce: 6; all_gather: [1.0, 2.0, 3.0]"
        for rank in range(3)
    ]


@pytest.mark.parametrize("page", [DDP_PAGE, FSDP_PAGE, AT_SCALE])
def test_outputs_are_clean(executed, page):
    text = "\n".join(line for _, block in outputs(page) for line in block).lower()
    for word in ("warn", "error", "traceback", "deprecat"):
        assert word not in text


# -- plot_05: FSDP2 -------------------------------------------------------------


def expand(listed):
    """'2 × (43, 128), (42, 128)' -> [(43, 128), (43, 128), (42, 128)]."""
    shapes = []
    for part in re.findall(r"(?:(\d+) × )?(\([\d, ]*\))", listed):
        shape = tuple(int(n) for n in re.findall(r"\d+", part[1]))
        shapes += [shape] * int(part[0] or 1)
    return shapes


@pytest.fixture(scope="module")
def fsdp_page():
    """plot_05's definitions: its model, to count against (no cell that does work runs)."""
    return runpy.run_path(str(ROOT / "examples" / f"{FSDP_PAGE}.py"), run_name="fsdp_page")


def full_shapes(page):
    """{parameter name: shape} of the page's model, as one process builds it."""
    return {name: tuple(p.shape) for name, p in page["Net"]().named_parameters()}


@pytest.mark.parametrize("world_size", FSDP_SIZES)
def test_fsdp2_shards_every_shown_parameter_on_dim_0(executed, fsdp_page, world_size):
    lines = tab(FSDP_PAGE, world_size)
    assert lines[0] == header(world_size)
    shapes = full_shapes(fsdp_page)
    rows = {}
    for line in lines:
        match = re.fullmatch(r"\[rank 0\] ([\w.]+)\s+(\([\d, ]*\))\s+Shard\(dim=0\)\s+(.*)", line)
        if match:
            rows[match[1]] = (match[2], expand(match[3]))
    assert set(rows) == set(fsdp_page["SHOWN"]) and len(rows) >= 5
    for name, (full, pieces) in rows.items():
        assert full == str(shapes[name])
        chunks = [c.shape for c in torch.zeros(shapes[name]).chunk(world_size)]
        chunks += [(0, *shapes[name][1:])] * (world_size - len(chunks))  # torch.chunk's missing ones
        assert pieces == [tuple(c) for c in chunks], name
    held = sum(math.prod(s) for s in shapes.values())
    (line,) = [line for line in lines if "numbers held:" in line]
    assert line.endswith(f" = {held}, one model")
    assert sum(map(int, re.findall(r"\d+", line.split(":")[1].split("=")[0]))) == held


def fsdp_steps(lines):
    """{step: (loss, gradient norm, clipped)} from rank 0's step lines."""
    found = {}
    for line in lines:
        match = re.fullmatch(
            r"\[rank 0\] step (\d+): loss " + NUMBER + r", gradient norm " + NUMBER + r"(, clipped to 1.5)?",
            line,
        )
        if match:
            found[int(match[1])] = (float(match[2]), float(match[3]), bool(match[4]))
    return found


@pytest.mark.parametrize("world_size", FSDP_SIZES)
def test_fsdp2_gathers_a_block_to_run_it_and_trains_with_clipping(executed, world_size):
    lines = tab(FSDP_PAGE, world_size)
    assert (
        "[rank 0] while blocks.1 runs: blocks.1.up.weight is a Parameter of (256, 64), torch.bfloat16"
    ) in lines
    local = math.ceil(256 / world_size)
    assert (
        f"[rank 0] after it: blocks.1.up.weight is a DTensor with a local piece of ({local},"
        f" 64); AdamW's exp_avg for it: ({local}, 64)"
    ) in lines
    steps = fsdp_steps(lines)
    assert sorted(steps) == list(range(1, 7))
    assert steps[6][0] < 0.8 * steps[1][0]  # it learns
    assert {clipped for _, _, clipped in steps.values()} == {True, False}
    assert all(clipped == (norm > 1.5) for _, norm, clipped in steps.values())
    files = ", ".join([".metadata"] + [f"__{rank}_0.distcp" for rank in range(world_size)])
    for step in (3, 6):
        assert f"[rank 0] saved step-{step}: {files}" in lines
    (where,) = [line for line in lines if line.startswith("[rank 0] in step-3, ")]
    match = re.fullmatch(
        r"\[rank 0\] in step-3, the steps that every process saved are written"
        r" once, in __(\d+)_0\.distcp; the random states of ranks 0 to (\d+) in (.*)",
        where,
    )
    assert match and int(match[1]) < world_size and int(match[2]) == world_size - 1, where
    own = ", ".join(f"__{rank}_0.distcp" for rank in range(world_size))
    assert match[3] == own  # each process's random state, in the file it wrote


@pytest.mark.parametrize("world_size", FSDP_SIZES)
def test_each_process_holds_a_share_under_fsdp2_and_everything_under_ddp(executed, fsdp_page, world_size):
    lines = tab(FSDP_PAGE, world_size)
    total = sum(math.prod(s) for s in full_shapes(fsdp_page).values())
    held, peaks = {}, {}
    for line in lines:
        match = re.fullmatch(
            r"\[rank 0\] (FSDP2|DDP), rank (\d+)\s+(\d+)\s+(\d+)\s+(\d+)"
            r"(?:\s+(-?\d+\.\d+))?",
            line,
        )
        if match:
            held[match[1], int(match[2])] = tuple(map(int, match.groups()[2:5]))
            peaks[match[1], int(match[2])] = match[6] and float(match[6])
    assert sorted(held) == sorted((kind, r) for kind in ("FSDP2", "DDP") for r in range(world_size))
    if not on_the_cpu(world_size):  # the peak above what each process held before its model
        assert "peak MiB above start" in next(line for line in lines if "numbers held  " in line)
        for rank in range(world_size):
            assert peaks["FSDP2", rank] < peaks["DDP", rank], peaks
    for rank in range(world_size):
        assert held["DDP", rank] == (total, total, 2 * total)
        parameters, gradients, state = held["FSDP2", rank]
        assert gradients == parameters and state == 2 * parameters  # AdamW's two averages
        assert abs(parameters - total / world_size) < 300  # a share: the uneven last layer
    assert sum(held["FSDP2", rank][0] for rank in range(world_size)) == total


def test_a_job_saved_by_2_processes_resumes_with_4(executed):
    block = block_after(FSDP_PAGE, "Resuming with another number of processes")
    assert block[0] == header(4)
    assert (
        "[rank 0] resumed from step-3: 3 steps done; no random state saved for rank 0 of 4"
        " processes: each keeps its own"
    ) in block  # saved by 2: a state per process, by rank
    resumed, uninterrupted = fsdp_steps(block), fsdp_steps(tab(FSDP_PAGE, 2))
    assert sorted(resumed) == [4, 5, 6]
    for step, (loss, _, _) in resumed.items():
        assert abs(loss - uninterrupted[step][0]) < 1e-3  # bfloat16 rounding
    match = re.fullmatch(
        r"steps 4 to 6 resumed with 4 processes, against the uninterrupted"
        r" 2-process run: largest difference in the losses " + NUMBER + r", in the parameters " + NUMBER,
        block[-1],
    )
    assert match and max(map(float, match.groups())) < 1e-3


def test_fsdp2_in_float32_is_one_process_to_rounding(executed):
    two, one = blocks_after(FSDP_PAGE, "The same result as one process")
    assert two[0] == header(2) and one[0] == header(1)  # each says where it ran
    block = two + one
    one = [x for x in block if x.startswith("one process: losses")]
    two = [x for x in block if x.startswith("2 processes, float32: losses")]
    assert len(one) == len(two) == 1
    alone, sharded = fsdp_losses(one[0]), fsdp_losses(two[0])
    assert len(alone) == 6 and max(abs(a - b) for a, b in zip(alone, sharded)) < 1e-5
    (line,) = [x for x in block if x.startswith("largest difference from one process")]
    losses, parameters = map(float, re.findall(NUMBER, line))
    assert losses < 1e-5 and parameters < 1e-4
    assert (
        "[rank 0] while blocks.1 runs: blocks.1.up.weight is a Parameter of (256, 64), torch.float32" in block
    )
    (line,) = [x for x in block if x.startswith("bfloat16 policy against float32")]
    assert 1e-4 < float(line.rsplit(" ", 1)[1]) < 0.05  # bfloat16 shows, and stays close


def fsdp_losses(line):
    """The numbers after "losses" in a line."""
    return [float(x) for x in re.search(r"losses:? (.*)", line)[1].split(", ")]


def step_memory(page):
    """What the section "What a step holds" printed: rows, bytes saved without and with
    checkpointing, the second block's forward runs each way, and the bytes each way to
    accumulate held after the first micro-batch."""
    block = block_after(FSDP_PAGE, "What a step holds")
    assert block[0] == header(2)
    match = re.fullmatch(
        r"\[rank 0\] one micro-batch of (\d+) rows: ([\d,]+) bytes saved for the backward, ([\d,]+) with"
        r" activation checkpointing; blocks\.1's forward ran (\d+) time without it and (\d+) times"
        r" with it",
        block[1],
    )
    assert match, block[1]
    rows, without, checkpointed, once, twice = (int(g.replace(",", "")) for g in match.groups())
    held = {}
    for way in page["ACCUMULATE"]:
        (line,) = [x for x in block if re.fullmatch(rf"\[rank 0\] {way}\s+[\d,]+(\s+[\d.]+)?", x)]
        held[way] = int(line.split()[-1 if on_the_cpu(2) else -2].replace(",", ""))
    return block, rows, (without, checkpointed), (once, twice), held


def saved_by_autograd(output, parameters):
    """The bytes of the tensors that autograd's nodes hold for the backward of *output*, read
    from the nodes themselves (``_saved_*``), each storage once, the parameters left out."""
    own = {p.untyped_storage().data_ptr() for p in parameters}
    saved, seen, todo = {}, set(), [output.grad_fn]
    while todo:
        node = todo.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        for name in dir(node):
            if name.startswith("_saved_") and isinstance(value := getattr(node, name), torch.Tensor):
                storage = value.untyped_storage()
                if storage.data_ptr() not in own:
                    saved[storage.data_ptr()] = storage.nbytes()
        todo += [next_node for next_node, _ in node.next_functions]
    return sum(saved.values())


def test_checkpointing_saves_each_blocks_input_only_and_runs_it_twice(executed, fsdp_page):
    """The page's count (saved_tensors_hooks, in the FSDP2 job) against what autograd's nodes
    hold for the same micro-batch in one process, in bfloat16 as the policy computes."""
    _, rows, (without, checkpointed), runs, _ = step_memory(fsdp_page)
    assert rows == GLOBAL_BATCH // 2 // fsdp_page["MICRO_BATCHES"]
    assert runs == (1, 2)  # the second run is the recomputation, in the backward
    torch.manual_seed(0)
    model = fsdp_page["Net"]().to(torch.bfloat16)
    x = torch.randn(rows, 2).to(torch.bfloat16)
    assert without == saved_by_autograd(model(x), model.parameters())
    block = model.blocks[0]
    inputs = torch.randn(rows, fsdp_page["WIDTH"], dtype=torch.bfloat16, requires_grad=True)
    per_block = saved_by_autograd(block(inputs), block.parameters())  # its input among them
    kept = inputs.nbytes  # what a checkpointed block keeps: its input
    assert checkpointed == without - fsdp_page["DEPTH"] * (per_block - kept)
    assert per_block == rows * (64 + 64 + 256 + 256 + 2) * 2  # the page's count per row
    (line,) = [x for x in block_after(FSDP_PAGE, "What a step holds") if "largest difference" in x]
    assert line.endswith("largest difference 0.0e+00")


def test_accumulating_whole_holds_a_whole_float32_gradient(executed, fsdp_page):
    """After the first micro-batch, each way holds what it promises, counted from the model's
    shapes: the pieces of parameters and gradients; the whole float32 gradient instead of its
    pieces; and the whole bfloat16 model as FSDP2 gathers it (its padded rows included)."""
    *_, held = step_memory(fsdp_page)
    shapes = full_shapes(fsdp_page).values()
    whole = sum(math.prod(s) for s in shapes)
    piece = sum(math.prod(torch.zeros(s).chunk(2)[0].shape) for s in shapes)  # rank 0's
    padded = sum(math.ceil(s[0] / 2) * 2 * math.prod(s[1:]) for s in shapes)
    assert 0 <= held["sharded"] - 8 * piece < 64  # 4 bytes each; and a scalar or two
    assert held["whole"] - held["sharded"] == 4 * (whole - piece)
    assert held["whole, gathered"] - held["whole"] == 2 * padded


# -- the examples' own functions, on small jobs ---------------------------------


@pytest.fixture(scope="module")
def ddp_definitions():
    """plot_04's functions, as its launcher's processes load them (no cell that does work)."""
    with loaded_as_script(ROOT / "examples" / f"{DDP_PAGE}.py") as namespace:
        yield namespace


def evaluate_both_ways():
    d = sys.modules["__mp_main__"].__dict__  # the page, as its launcher's processes load it
    torch.manual_seed(0)
    model = d["make_model"]()
    cpu = torch.device("cpu")
    return d["evaluate"](model, cpu), d["evaluate"](model, cpu, padded=True)


def test_evaluate_counts_each_point_once(ddp_definitions):
    reports = ddp_definitions["launch"](3, evaluate_both_ways)
    (exact, padded), *others = [value for _, value, _ in reports]
    assert exact[1] == HELD_OUT and padded[1] == 501
    assert all(other == (exact, padded) for other in others)  # every process has the sums


def who_listens_on_the_store_port():
    """(whether a socket of this machine listens on MASTER_PORT, whether it is this process's)."""
    torch.distributed.barrier()  # every process has joined: none leaves under a connecting peer
    port, own = int(os.environ["MASTER_PORT"]), set()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            own.add(os.readlink(f"/proc/self/fd/{fd}"))
    listening = set()
    tables = [Path("/proc/net/tcp"), Path("/proc/net/tcp6")]  # the store listens on IPv6 too
    for line in [row for table in tables if table.is_file() for row in table.read_text().splitlines()[1:]]:
        _, local, _, state, *_, inode = line.split()[:10]
        if state == "0A" and int(local.split(":")[1], 16) == port:  # 0A: LISTEN
            listening.add(f"socket:[{inode}]")
    return bool(listening), bool(listening & own)


@pytest.mark.skipif(not Path("/proc/net/tcp").is_file(), reason="reads Linux's /proc")
@pytest.mark.parametrize("page", ["plot_03_distributed_data_parallel", DDP_PAGE, FSDP_PAGE, AT_SCALE])
def test_the_launcher_holds_the_store_port_and_no_rank_opens_it(page):
    """The store is the launcher's, bound before any process learns its port: no port is
    free between being picked and being used, for a side-by-side job to take (it was, in
    plot_04 and plot_05). With TORCHELASTIC_USE_AGENT_STORE, as the DDP page says, rank 0's
    init_process_group connects to it and opens none."""
    job = joined_then_who_listens if page.startswith("plot_03") else who_listens_on_the_store_port
    with loaded_as_script(ROOT / "examples" / f"{page}.py") as namespace:
        reports = namespace["launch"](2, job)  # plot_04's and plot_05's join the group first
    assert [report[1] for report in reports] == [(True, False), (True, False)]


def joined_then_who_listens():
    """plot_03's launcher runs a bare function: join the group, then look."""
    torch.distributed.init_process_group("gloo")
    try:
        return who_listens_on_the_store_port()
    finally:
        torch.distributed.destroy_process_group()


def checkpoint_round_trip(folder):
    d = sys.modules["__mp_main__"].__dict__
    cpu = torch.device("cpu")
    torch.manual_seed(1 + torch.distributed.get_rank())
    model, _ = d["wrap"](d["make_model"](), cpu)
    optimizer = torch.optim.AdamW(model.parameters())
    path = os.path.join(folder, "epoch-1.pt")
    d["save_checkpoint"](path, model, optimizer, 1, cpu)
    saved = torch.load(path, map_location="cpu")
    fresh = d["make_model"]()
    done = d["load_checkpoint"](path, fresh, torch.optim.AdamW(fresh.parameters()), cpu)
    same = all(torch.equal(a, b) for a, b in zip(fresh.parameters(), model.module.parameters()))
    del model
    return sorted(saved), list(saved["model"]), len(saved["rng_states"]), done, same


def test_checkpoint_names_are_the_plain_models_and_hold_every_rank(ddp_definitions, tmp_path):
    reports = ddp_definitions["launch"](2, checkpoint_round_trip, str(tmp_path))
    keys, names, states, done, same = reports[1][1]
    d = ddp_definitions
    assert keys == ["epochs_done", "model", "optimizer", "rng_states"]
    assert names == list(d["make_model"]().state_dict()) and not names[0].startswith("module.")
    assert states == 2 and done == 1 and same
    assert sorted(p.name for p in tmp_path.iterdir()) == ["epoch-1.pt"]  # no .partial left


@pytest.mark.filterwarnings("ignore:for .* copying from a non-meta parameter")  # meta: no data
def test_resuming_hands_the_random_number_generators_cpu_byte_tensors(ddp_definitions, tmp_path, monkeypatch):
    """On a GPU, ``map_location=device`` made them CUDA tensors, which the setters refuse.

    The process's device here is ``meta``, another device than the CPU: with
    ``map_location=device`` the states would land there, as they did on CUDA,
    and ``torch.set_rng_state`` would get a tensor it refuses.
    """
    d = ddp_definitions
    torch.distributed.init_process_group("gloo", store=torch.distributed.HashStore(), rank=0, world_size=1)
    try:
        model = d["make_model"]()
        optimizer = torch.optim.AdamW(model.parameters())
        model(torch.zeros(1, 2)).sum().backward()
        optimizer.step()  # some state to save
        path = tmp_path / "epoch-1.pt"
        ddp = torch.nn.parallel.DistributedDataParallel(model)
        d["save_checkpoint"](path, ddp, optimizer, 1, torch.device("cpu"))
        handed = []
        monkeypatch.setattr(torch, "set_rng_state", lambda state: handed.append(state))
        fresh = d["make_model"]().to("meta")  # the process's model, on its device
        done = d["load_checkpoint"](path, fresh, torch.optim.AdamW(fresh.parameters()), torch.device("meta"))
        del ddp
    finally:
        torch.distributed.destroy_process_group()
    assert done == 1 and len(handed) == 1
    assert handed[0].device == torch.device("cpu") and handed[0].dtype == torch.uint8


@pytest.fixture(scope="module")
def fsdp_definitions():
    """plot_05's functions, as its launcher's processes load them (no cell that does work)."""
    with loaded_as_script(ROOT / "examples" / f"{FSDP_PAGE}.py") as namespace:
        yield namespace


def random_states_saved_and_restored(folder):
    """Each process seeds its own generator, saves, draws, resumes: is its own state back?"""
    d = sys.modules["__mp_main__"].__dict__
    cpu, rank = torch.device("cpu"), torch.distributed.get_rank()
    model = d["sharded_model"](cpu)
    optimizer = torch.optim.AdamW(model.parameters())
    state = d["TrainingState"](model, optimizer, d["warm_up"](optimizer))
    torch.manual_seed(100 + rank)
    saved = torch.get_rng_state()
    torch.distributed.checkpoint.save(d["checkpointed"](state, cpu), checkpoint_id=folder)
    torch.rand(3)  # the generator moves on
    said = d["load_training"](folder, state, cpu)
    back = torch.equal(torch.get_rng_state(), saved)
    del model, optimizer, state
    return said, back, saved.tolist()  # a list: a tensor would be shared memory, gone with this process


def resumed_by_more(folder):
    """A job of another number of processes resumes from ``folder``: what does it say?"""
    d = sys.modules["__mp_main__"].__dict__
    cpu = torch.device("cpu")
    model = d["sharded_model"](cpu)
    optimizer = torch.optim.AdamW(model.parameters())
    state = d["TrainingState"](model, optimizer, d["warm_up"](optimizer))
    before = torch.get_rng_state()
    said = d["load_training"](folder, state, cpu)
    kept = torch.equal(torch.get_rng_state(), before)
    del model, optimizer, state
    return said, kept


def test_each_process_saves_its_own_random_state_and_gets_it_back(fsdp_definitions, tmp_path):
    """Random states differ from process to process; DCP keeps one copy of a value saved under
    one key (dedup_save_to_lowest_rank=False: not even rank 0's), so each has a key of its own."""
    from torch.distributed.checkpoint.format_utils import dcp_to_torch_save

    launch = fsdp_definitions["launch"]
    reports = [value for _, value, _ in launch(2, random_states_saved_and_restored, str(tmp_path))]
    assert [(said, back) for said, back, _ in reports] == [("random states restored", True)] * 2
    dcp_to_torch_save(tmp_path, tmp_path / "whole.pt")
    whole = torch.load(tmp_path / "whole.pt", weights_only=False)
    for rank, (_, _, saved) in enumerate(reports):
        assert whole[f"random_{rank}_of_2"]["cpu"].tolist() == saved
    assert reports[0][2] != reports[1][2]
    more = [value for _, value, _ in launch(3, resumed_by_more, str(tmp_path))]
    assert more == [
        (f"no random state saved for rank {rank} of 3 processes: each keeps its own", True)
        for rank in range(3)
    ]


def test_a_process_on_a_gpu_saves_and_restores_that_gpus_generator(fsdp_definitions, monkeypatch):
    """Dropout on a GPU draws from the GPU's generator, not the CPU's."""
    gpu, handed = torch.device("cuda", 1), []
    monkeypatch.setattr(
        torch.cuda, "get_rng_state", lambda device: torch.full((16,), device.index, dtype=torch.uint8)
    )
    monkeypatch.setattr(torch.cuda, "set_rng_state", lambda state, device: handed.append((state, device)))
    saved = fsdp_definitions["RandomState"](gpu).state_dict()
    assert sorted(saved) == ["cpu", "cuda"] and saved["cuda"].tolist() == [1] * 16
    fsdp_definitions["RandomState"](gpu).load_state_dict(saved)
    assert len(handed) == 1 and handed[0][1] == gpu and torch.equal(handed[0][0], saved["cuda"])


def test_the_peak_on_a_gpu_leaves_out_what_the_process_held_before(fsdp_definitions, monkeypatch):
    """cuBLAS's workspace (megabytes, kept) is allocated before the model; it is not the model's."""
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda device: 34.5 * 2**20)
    model = fsdp_definitions["Net"]()
    optimizer = torch.optim.AdamW(model.parameters())
    *_, peak = fsdp_definitions["holdings"](model, optimizer, torch.device("cuda", 0), 32 * 2**20)
    assert peak == 2.5


COLLECTIVES = {
    "all_reduce",
    "broadcast",
    "all_gather",
    "all_gather_into_tensor",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "gather",
    "scatter",
    "all_to_all",
}
FACTORIES = {"tensor", "zeros", "ones", "full", "empty", "arange"}  # *_like keep their input's device


def made_without_device(call, unplaced):
    """True if *call* makes a tensor with no ``device=``, or clones one of *unplaced*."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    if func.attr == "clone":
        return isinstance(func.value, ast.Name) and func.value.id in unplaced
    return (
        ast.unparse(func.value) == "torch"
        and func.attr in FACTORIES
        and not any(keyword.arg == "device" for keyword in call.keywords)
    )


def collective_tensors_without_a_device(path):
    """``file:line: name`` for each tensor given to a ``dist`` collective, made with no ``device=``.

    An NCCL group refuses a CPU tensor ("No backend type associated with
    device type cpu"): a tensor a process hands a collective must be made on
    the process's device, in the function that hands it.
    """
    found = []
    for function in ast.walk(ast.parse(path.read_text("utf-8"))):
        if not isinstance(function, ast.FunctionDef):
            continue
        unplaced = set()
        for node in ast.walk(function):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                if made_without_device(node.value, unplaced):
                    unplaced.update(t.id for t in node.targets if isinstance(t, ast.Name))
        for node in ast.walk(function):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in COLLECTIVES
                and ast.unparse(node.func.value) == "dist"
                and node.args
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id in unplaced
            ):
                found.append(f"{path.name}:{node.lineno}: {node.args[0].id}")
    return found


@pytest.mark.parametrize("page", ["plot_03_distributed_data_parallel", DDP_PAGE, FSDP_PAGE, AT_SCALE])
def test_every_tensor_a_collective_gets_is_made_on_the_process_device(page):
    assert collective_tensors_without_a_device(ROOT / "examples" / f"{page}.py") == []


def test_the_collective_check_finds_a_cpu_tensor_in_an_nccl_group(tmp_path):
    old = tmp_path / "old.py"  # what plot_05 did before the first GPU run
    old.write_text(
        "def check(same):\n    same = torch.tensor(int(same))\n"
        "    dist.all_reduce(same, op=dist.ReduceOp.MIN)\n"
    )
    assert collective_tensors_without_a_device(old) == ["old.py:3: same"]


def test_newest_checkpoint_is_the_most_epochs(ddp_definitions, tmp_path):
    for epochs_done in (1, 2, 10):
        (tmp_path / f"epoch-{epochs_done}.pt").write_bytes(b"")
    assert ddp_definitions["newest_checkpoint"](tmp_path) == str(tmp_path / "epoch-10.pt")
    assert ddp_definitions["newest_checkpoint"](tmp_path / "none") is None


# -- as readers start them: torchrun --------------------------------------------


def torchrun(page, cwd, processes=2):
    """Run ``torchrun --nproc-per-node=N`` on the page in ``cwd``; return its output."""
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        f"--nproc-per-node={processes}",
        str(ROOT / "examples" / f"{page}.py"),
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PET_", "MASTER_"))}
    done = subprocess.run(
        command, cwd=cwd, env=env, text=True, timeout=300, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    assert done.returncode == 0, done.stdout[-4000:]
    assert "terminate called" not in done.stdout
    for rank in range(processes):  # each process says where it runs: a GPU of its own, or the CPU
        where = f"nccl on cuda:{rank}" if not on_the_cpu(processes) else "gloo on cpu"
        assert f"rank {rank}: {where}" in done.stdout, done.stdout[-4000:]
    return done.stdout


def test_ddp_page_under_torchrun_trains_then_resumes(tmp_path):
    first = torchrun(DDP_PAGE, tmp_path)
    assert "epoch 4: loss" in first and "resumed" not in first
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == [
        f"epoch-{n}.pt" for n in range(1, EPOCHS + 1)
    ]
    again = torchrun(DDP_PAGE, tmp_path)
    assert "resumed from epoch-4.pt: 4 epochs done" in again
    assert "epoch 1:" not in again


def test_fsdp_page_under_torchrun_resumes_with_more_processes(tmp_path):
    """The reader's command, then again with 4 processes from the step-3 checkpoint."""
    output = torchrun(FSDP_PAGE, tmp_path)
    folder = tmp_path / "fsdp2-checkpoint"
    assert "saved step-3: .metadata, __0_0.distcp, __1_0.distcp" in output
    assert sorted(p.name for p in folder.iterdir()) == ["model.pt", "step-3", "step-6"]
    shutil.rmtree(folder / "step-6")  # as if the job had stopped after step 3
    again = torchrun(FSDP_PAGE, tmp_path, processes=4)
    assert "resumed from step-3: 3 steps done" in again and "step 1:" not in again
    assert "saved step-6: .metadata, __0_0.distcp, __1_0.distcp, __2_0.distcp, __3_0.distcp" in again
