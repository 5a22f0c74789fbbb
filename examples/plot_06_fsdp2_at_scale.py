"""
.. _fsdp2-at-scale-tutorial:

FSDP2 at scale
==============

:ref:`The FSDP2 tutorial <fsdp2-tutorial>` built, sharded and trained a
model with FSDP2. Jobs on many GPUs make more choices on top of that, and
this page measures each one on the same model: how the processes get their
starting values without a whole copy of the model on rank 0; how long a
block stays gathered after its forward (``reshard_after_forward``) and
which blocks are gathered ahead of time (prefetching); ``torch.compile``
for each block; and HSDP, which shards within a node and replicates across
nodes. It ends with what else such jobs need, and where PyTorch documents
it. Run it with

.. code-block:: bash

   torchrun --nproc-per-node=1 plot_06_fsdp2_at_scale.py
   torchrun --nproc-per-node=4 plot_06_fsdp2_at_scale.py

The first command writes the starting values once, with one process; the
second trains from them with all of this page's choices together. As in
the FSDP2 tutorial, each process works on a GPU of its own, with the
``nccl`` backend, when the machine has at least one GPU per process;
otherwise all of them work on the CPU, with the ``gloo`` backend, and say
so. The outputs below come from running it with 1 and 4 processes by the
same rule, on the machine that built this site unless the line above a
result says it was recorded on another; that line says where each result
ran. The time that a choice saves means something only on GPUs: the
processes measure it where they run on GPUs, and say so where they run on
the CPU. The page is written for PyTorch 2.13; the first output shows the
version that ran it.
"""

# %%
# Imports and settings
# --------------------
#
# The settings of the FSDP2 tutorial, with fewer steps. ``PREFETCH`` is how
# many blocks ahead the prefetching below gathers, and ``REPLICAS`` how many
# nodes the 4 processes of this page's results act as, for HSDP.

import contextlib
import gc
import io
import itertools
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch._dynamo  # before any process group exists: see the DDP tutorial
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed._tools.mem_tracker import MemTracker
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    set_model_state_dict,
)
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.distributed.tensor import DTensor
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

if __name__ == "__main__":  # not again in each process the page starts
    print("PyTorch", torch.__version__)

SEED = 0
GLOBAL_BATCH = 240
MICRO_BATCHES = 2
STEPS = 3
LEARNING_RATE = 0.003
MAX_NORM = 1.5
WIDTH, DEPTH = 64, 4
PREFETCH = 2
REPLICAS = 2

# %%
# The task and the model
# ----------------------
#
# The three spirals and the network of the FSDP2 tutorial: a layer that
# widens the 2 coordinates to ``WIDTH`` numbers, ``DEPTH`` identical
# residual blocks, and a layer that scores the 3 arms; and its mixed
# precision, bfloat16 parameters with ``float32`` gradient reduction, and
# ``float32`` scores out of the root group.


def spirals(n, seed, arms=3, noise=0.25):
    """``n`` noisy points on ``arms`` interleaved spirals, labelled by arm."""
    gen = torch.Generator().manual_seed(seed)
    labels = torch.arange(n) % arms
    radius = 0.3 + 4 * torch.rand(n, generator=gen)
    angle = 1.6 * radius + labels * (2 * math.pi / arms)
    points = torch.stack([radius * angle.cos(), radius * angle.sin()], dim=1)
    return TensorDataset(points + noise * torch.randn(n, 2, generator=gen), labels)


train_set = spirals(2400, seed=1)


class Block(nn.Module):
    """A residual block: LayerNorm, a Linear to four times the width, GELU, a Linear back."""

    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.up = nn.Linear(width, 4 * width)
        self.down = nn.Linear(4 * width, width)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))


class Net(nn.Module):
    """2 numbers in, ``DEPTH`` blocks of ``WIDTH``, a score for each of the 3 arms out."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(2, WIDTH)
        self.blocks = nn.ModuleList(Block(WIDTH) for _ in range(DEPTH))
        self.head = nn.Linear(WIDTH, 3)

    def forward(self, x):
        x = self.embed(x)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


BLOCKS = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
ROOT = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32,
                            output_dtype=torch.float32)

# %%
# Building it: checkpointing, compiling, sharding
# -----------------------------------------------
#
# ``sharded_model`` builds the model on the ``meta`` device and prepares each
# block in the order torchtitan uses: activation checkpointing first (see the
# FSDP2 tutorial), then ``torch.compile``, then ``fully_shard``; the root
# group last. Then ``to_empty`` gives the pieces memory, without values:
# they come from one of the two ways of the section
# :ref:`fsdp2-starting-values`. ``mesh`` is a device mesh of one dimension,
# as in the FSDP2 tutorial, or of two, for HSDP (below);
# ``reshard_after_forward`` applies to the blocks.


def sharded_model(mesh, device, reshard_after_forward=True, recompute=False, backend=None):
    """A ``Net`` built on the ``meta`` device, its blocks checkpointed (``recompute``), compiled
    (with ``backend``) and sharded on ``mesh``, then the whole model; memory, no values yet."""
    with torch.device("meta"):
        model = Net()
    for number, block in enumerate(model.blocks):
        if recompute:  # 1. activation checkpointing
            block = model.blocks[number] = checkpoint_wrapper(block)
        if backend:  # 2. torch.compile, in place: the module stays the same object
            block.compile(backend=backend)
        fully_shard(block, mesh=mesh, mp_policy=BLOCKS,  # 3. sharding
                    reshard_after_forward=reshard_after_forward)
    fully_shard(model, mesh=mesh, mp_policy=ROOT)
    model.to_empty(device=device)
    return model


def flat_mesh(device):
    """All the processes in one row, on the device type they use, as in the FSDP2 tutorial."""
    return init_device_mesh(device.type, (dist.get_world_size(),))


def local(tensor):
    """This process's piece of a sharded tensor, or the tensor itself."""
    return tensor.to_local() if isinstance(tensor, DTensor) else tensor


# %%
# .. _fsdp2-starting-values:
#
# Starting values without a whole copy on rank 0
# ----------------------------------------------
#
# The FSDP2 tutorial gave the pieces their values from rank 0:
# ``set_model_state_dict(..., broadcast_from_rank0=True)``, with the whole
# state dict on rank 0, sends every process each whole tensor in turn, and
# each keeps its rows. That needs the whole model in rank 0's memory (on the
# CPU if it likes) and, on every process, room for the largest tensor: for a
# model larger than one machine's memory it cannot work. Practitioners do
# one of these instead:
#
# * torchtitan initialises the pieces where they are: after ``to_empty`` it
#   calls the model's own ``init_weights`` under ``torch.no_grad()``, whose
#   random operations on ``DTensor`` pieces draw from one random stream that
#   the processes keep in step, each piece from its own offset in it
#   (``OffsetBasedRNGTracker``). In PyTorch 2.13 that needs a GPU, or a
#   device like one: on the CPU, DTensor warns that its random operators may
#   not have complete support there, and each process draws its piece from
#   its own generator, so processes seeded alike give every piece the same
#   numbers. This page, built on the CPU, does not do it.
# * A *seed checkpoint*: one process builds the model with its starting
#   values, once, and saves it with DCP (torchtitan's
#   ``--checkpoint.create_seed_checkpoint``, which must run with one
#   process); every job then loads it as it would resume, each process
#   reading with ``dcp.load``, one tensor at a time, the tensors its pieces
#   come from, and keeping its rows. ``write_seed`` writes it, in a job of
#   one process, and ``from_seed`` loads it.
# * Pretrained weights are read the same way, from a checkpoint that
#   ``dcp.save`` wrote or, with DCP's ``HuggingFaceStorageReader``, from the
#   safetensors files of a Hugging Face model, whose parameter names may need
#   renaming to the model's.
#
# ``values_held`` measures the most memory a process holds while the values
# arrive, with ``MemTracker`` (``torch.distributed._tools.mem_tracker``), a
# private tool of PyTorch's, which may change between releases: it counts
# the bytes of every tensor made or written in its context, on any device,
# where the CPU has no counter like ``torch.cuda.max_memory_allocated``.


def starting_values():
    """The values a ``Net`` starts with in one process, after ``torch.manual_seed(SEED)``."""
    torch.manual_seed(SEED)
    return Net().state_dict()


def from_rank0(model):
    """Give the pieces their values from rank 0's whole state dict, as the FSDP2 tutorial did."""
    full = starting_values() if dist.get_rank() == 0 else {}
    options = StateDictOptions(full_state_dict=True, broadcast_from_rank0=True)
    set_model_state_dict(model, full, options=options)


def write_seed(folder):
    """A job of one process: build the whole model with its starting values, save it with DCP."""
    _, world_size, _, log = this_process()
    if world_size != 1:
        raise RuntimeError(f"a seed checkpoint is written by one process, not {world_size}")
    dcp.save(starting_values(), checkpoint_id=folder)
    log(f"wrote the seed checkpoint {Path(folder).name}: "
        + ", ".join(sorted(p.name for p in Path(folder).iterdir())))


def from_seed(model, folder):
    """Give the pieces their values from the seed checkpoint: each process reads its own."""
    state = get_model_state_dict(model)  # this process's pieces, as DTensors
    dcp.load(state, checkpoint_id=folder)
    set_model_state_dict(model, state)


def values_held(fill, model):
    """Run ``fill(model)``; return the most bytes this process held meanwhile, on each of its
    devices, added up."""
    with MemTracker() as tracker:
        fill(model)
    return sum(peak["Total"] for peak in tracker.get_tracker_snapshot("peak").values())


# %%
# Resharding after the forward
# ----------------------------
#
# ``fully_shard(..., reshard_after_forward=...)`` decides what happens to a
# group's gathered parameters between its forward and its backward:
#
# * ``True``, the default for every group but the root: they are freed after
#   the forward and gathered again for the backward, from all the processes.
#   Meanwhile, a process holds only its pieces.
# * ``False``, the default for the root group (FSDP2 finds the root at the
#   first forward and sets it then): they stay whole until the group's
#   backward, which gathers nothing. That saves an all-gather per group and
#   step, and costs the whole group's memory from the forward to the
#   backward. torchtitan does it for the last layers, which the backward
#   needs first (``fully_shard([norm, output], reshard_after_forward=False)``
#   makes one group of the final norm and the output layer), and for every
#   block when it also uses pipeline parallelism, where each micro-batch
#   would gather each block again.
# * An ``int``, a divisor of the number of processes other than 1 and that
#   number: after the forward, each process keeps the block sharded over
#   that many processes instead of all of them (the docstring suggests
#   ``torch.cuda.device_count()``, the GPUs of a node). The backward's
#   all-gather then runs within those processes only, on a node over its
#   fast links, and each holds that fraction of the block meanwhile.
#
# ``gathered_after_forward`` runs the forward and counts what a process then
# holds gathered: the bytes of the parameters that the modules hold, beyond
# the pieces. ``set_reshard_after_forward(True or False)`` changes the choice
# on a model already sharded, for instance ``False`` for evaluation, which has
# no backward.


def gathered_after_forward(model, x):
    """The model's output for ``x``, and the bytes of parameters the process then holds
    gathered, in full or resharded to fewer processes: beyond the pieces."""
    pieces = {id(p) for p in model.parameters()}  # before the forward: the sharded ones
    output = model(x)
    held = sum(local(p).nbytes for p in model.parameters() if id(p) not in pieces)
    return output, held


def milliseconds_per_step(model, device, x, y, repeat=5):
    """On a GPU, the mean time of a forward and backward of ``(x, y)``, after one that warms up;
    None on the CPU, where the time would say nothing about GPUs."""
    if device.type != "cuda":
        return None
    for number in range(repeat + 1):
        if number == 1:
            torch.cuda.synchronize(device)
            start = time.perf_counter()
        F.cross_entropy(model(x), y).backward()
    torch.cuda.synchronize(device)
    return (time.perf_counter() - start) * 1000 / repeat


# %%
# Prefetching
# -----------
#
# A block's all-gather must end before the block computes. On GPUs, FSDP2
# runs the gathers on CUDA streams of their own, so that the gather of one
# block can run while another computes, if it was asked for early enough:
#
# * In the forward, FSDP2 asks for a block's gather when the block's
#   forward starts; but the CPU, which only queues work for the GPU, runs
#   ahead of it, and asks for the next blocks' gathers while the GPU still
#   computes. The gathers overlap the computation without being asked for
#   early ("implicit" prefetching).
# * In the backward, FSDP2 asks explicitly: when a block's backward starts,
#   it also asks for the gather of the block whose backward comes next, in
#   the reverse order of the forward ("explicit" prefetching).
# * ``block.set_modules_to_forward_prefetch([...])`` and
#   ``block.set_modules_to_backward_prefetch([...])`` name the blocks whose
#   gathers FSDP2 asks for when ``block`` starts, in the forward and in the
#   backward. With the one block next, they do what the defaults do, asked
#   for earlier in the forward; with more, the gathers get further ahead,
#   and more blocks are gathered at once.
#
# On the CPU with ``gloo``, as in this build, a gather ends before the
# process goes on: prefetching only asks for it earlier, and nothing
# overlaps. ``held_as_blocks_start`` counts, with ``MemTracker`` (above), the
# bytes a process holds as each block starts, in the forward and in the
# backward; run with FSDP2's defaults and with ``PREFETCH`` blocks ahead,
# the difference is what prefetching adds. What it saves in time is measured
# on GPUs only.

def prefetch(model, ahead):
    """Have each block ask for the gathers of the ``ahead`` blocks after it in the forward, and
    of the ``ahead`` before it in the backward."""
    blocks = list(model.blocks)
    for number, block in enumerate(blocks):
        block.set_modules_to_forward_prefetch(blocks[number + 1:number + 1 + ahead])
        block.set_modules_to_backward_prefetch(blocks[max(0, number - ahead):number][::-1])


def held_as_blocks_start(model, device, x, y):
    """The bytes this process holds as each block starts, in the forward and in the backward,
    listed from the first block to the last."""
    tracker = MemTracker()
    forward, backward = [], []

    def held():
        return tracker.get_tracker_snapshot()[device]["Total"]

    def count_as_backward_starts(block, args, output):
        output.register_hook(lambda grad: backward.append(held()))  # after FSDP2's own

    hooks = []
    for block in model.blocks:  # these hooks run after FSDP2's, which come first
        hooks.append(block.register_forward_pre_hook(lambda block, args: forward.append(held())))
        hooks.append(block.register_forward_hook(count_as_backward_starts))
    gc.collect()  # the earlier models, which refer to themselves, go now and not during the pass
    with tracker:
        F.cross_entropy(model(x), y).backward()
    for hook in hooks:
        hook.remove()
    return forward, backward[::-1]


# %%
# Compiling each block
# --------------------
#
# ``torch.compile`` turns the operations of a block into a graph, which a
# backend turns into fewer, faster kernels; on GPUs it is the usual way to
# get speed with FSDP2. torchtitan compiles each block, after activation
# checkpointing and before ``fully_shard``, as ``sharded_model`` does: the
# blocks run the same code, so one compiled graph serves them all, and
# FSDP2's hooks, which gather and free the parameters around each block,
# stay out of it (FSDP2 marks them ``torch._dynamo.disable``).
# ``block.compile()`` compiles a module in place, so that it stays the same
# object for ``fully_shard`` and for the state dict; ``torch.compile(block)``
# returns a wrapper instead, which torchtitan puts in the block's place.
# torchtitan names compiling the whole model, after sharding, as the
# alternative.
#
# The default backend, Inductor, generates its kernels: Triton's on GPUs,
# C++ on the CPU, which means running a C++ compiler in every process on
# every build of this page whose cache is empty. So ``backend_for`` picks
# Inductor on a GPU and, on the CPU, ``"aot_eager"``: the same capture of the
# graph by TorchDynamo and the same backward from AOTAutograd, run by
# PyTorch's own operations instead of generated code. It shows that the
# pieces fit together, not the speed; what compiling saves in time is
# measured on GPUs only.


def backend_for(device):
    """``torch.compile``'s backend here: Inductor on a GPU, ``"aot_eager"`` on the CPU."""
    return "inductor" if device.type == "cuda" else "aot_eager"


# %%
# HSDP: shard within a node, replicate across nodes
# -------------------------------------------------
#
# With FSDP2 over all the GPUs of a job, every block's all-gather, forward
# and backward, crosses the network between nodes. HSDP (hybrid sharding)
# shards each parameter over the GPUs of one node only, and every node keeps
# the same pieces: given a device mesh of two dimensions, of shape
# ``(nodes, gpus_per_node)`` and with ``mesh_dim_names=("replicate",
# "shard")`` (``init_device_mesh`` makes it), ``fully_shard`` places each
# parameter ``(Replicate(), Shard(0))``: replicated along the first
# dimension, sharded along the second. Gathering a block then stays within a node; after the
# backward, each node reduce-scatters the gradients within itself and the
# nodes all-reduce their pieces with each other, the only traffic between
# nodes. Each process holds ``1/gpus_per_node`` of the model, not
# ``1/WORLD_SIZE``. torchtitan calls the two dimensions ``dp_replicate`` and
# ``fsdp``. With accumulation, ``model.set_requires_all_reduce(False)`` on
# all micro-batches but the last skips only the all-reduce between nodes;
# ``clip_grad_norm_`` works as before while every parameter is on this one
# mesh.
#
# ``hsdp_mesh`` builds that mesh. Run with ``torchrun`` on several machines,
# this page takes a node per machine; in the results below, its 4 processes
# act as ``REPLICAS`` = 2 nodes of 2 processes each.


def hsdp_mesh(device, nodes):
    """A mesh of ``nodes`` rows, each sharding over the processes of one node."""
    return init_device_mesh(device.type, (nodes, dist.get_world_size() // nodes),
                            mesh_dim_names=("replicate", "shard"))


# %%
# Training
# --------
#
# ``train`` takes the FSDP2 tutorial's steps: each global batch in
# ``MICRO_BATCHES`` micro-batches, reduce-scattered after each, then
# clipping, AdamW's step and the learning rate's warm-up.


def global_batches(device):
    """This process's share of each global batch (the sampler deals them whatever the number of
    processes)."""
    sampler = DistributedSampler(train_set, seed=SEED)
    loader = DataLoader(train_set, batch_size=GLOBAL_BATCH // dist.get_world_size(), sampler=sampler)
    for inputs, labels in loader:
        yield inputs.to(device), labels.to(device)


def train(model, device, steps=STEPS):
    """Train ``steps`` steps; return each step's loss, averaged over the processes."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE)
    warm_up = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / 3))
    losses = []
    for inputs, labels in itertools.islice(global_batches(device), steps):
        optimizer.zero_grad()
        total = torch.zeros((), device=device)
        for x, y in zip(inputs.chunk(MICRO_BATCHES), labels.chunk(MICRO_BATCHES)):
            loss = F.cross_entropy(model(x), y) / MICRO_BATCHES
            loss.backward()
            total += loss.detach()
        torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
        optimizer.step()
        warm_up.step()
        dist.all_reduce(total)
        losses.append(total.item() / dist.get_world_size())
    return losses


# %%
# What every process runs
# -----------------------
#
# ``run_rank`` and ``this_process`` are those of the FSDP2 tutorial: a GPU per
# process when the machine has enough, else the CPU, and ``gc.collect()``
# before the group is destroyed.


def device_for_this_process():
    """``cuda:LOCAL_RANK`` if this machine has a GPU for each of its processes, else the CPU."""
    if torch.cuda.device_count() >= int(os.environ["LOCAL_WORLD_SIZE"]):
        return torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    return torch.device("cpu")


def run_rank(job, *args):
    """Be one process of the group: join it, run ``job``, leave it."""
    device = device_for_this_process()
    gpus = torch.cuda.device_count()
    if device.type == "cpu" and gpus:
        os.environ["CUDA_VISIBLE_DEVICES"] = ""  # no GPU for this process, before CUDA starts
        if os.environ["RANK"] == "0":
            print(f"{os.environ['LOCAL_WORLD_SIZE']} processes on this machine and {gpus} GPU"
                  f"{'s' if gpus > 1 else ''}: NCCL needs a GPU per process, so all of them"
                  " use the CPU and gloo")
    if device.type == "cuda":
        torch.cuda.set_device(device)
        dist.init_process_group("nccl", device_id=device)
    else:
        dist.init_process_group("gloo")
    try:
        return job(*args)
    finally:
        gc.collect()  # frees the sharded models, which refer to themselves
        dist.destroy_process_group()


def this_process():
    """This process's rank, the world size, its device and its ``log``."""
    rank = dist.get_rank()
    log = print if rank == 0 else lambda *args: None
    return rank, dist.get_world_size(), device_for_this_process(), log


# %%
# The measurements
# ----------------
#
# ``tour`` is the job of this page's results: 4 processes measure each choice
# above on the first micro-batch of the first global batch, in turn, every
# model given its values from the seed checkpoint, and then train with all
# of them together (HSDP on ``REPLICAS`` = 2 nodes, activation checkpointing,
# compiled blocks, ``PREFETCH`` blocks prefetched) beside FSDP2 as the FSDP2
# tutorial used it, from the same values. Rank 0 logs what it found, and,
# where all processes found something, what each did.


def compare_resharding(device, seed, x, y, log):
    """Log, for each ``reshard_after_forward``, what a process holds gathered between forward and
    backward; on a GPU, the time of a step."""
    gpu = device.type == "cuda"
    log(f"{'reshard_after_forward':<23}{'bytes gathered after the forward':>33}"
        + ("  ms per step" if gpu else ""))
    for choice in (True, False, dist.get_world_size() // REPLICAS):
        model = sharded_model(flat_mesh(device), device, reshard_after_forward=choice)
        from_seed(model, seed)
        output, held = gathered_after_forward(model, x)
        F.cross_entropy(output, y).backward()
        milliseconds = milliseconds_per_step(model, device, x, y)
        log(f"{choice!s:<23}{held:>33,}" + (f"{milliseconds:>14.2f}" if gpu else ""))


def compare_prefetching(device, seed, x, y, log):
    """Log what a process holds as each block starts, by default and prefetching ``PREFETCH``
    blocks ahead; on a GPU, the time of a step."""
    held, milliseconds = {}, {}
    for ahead in (0, PREFETCH):
        model = sharded_model(flat_mesh(device), device)
        from_seed(model, seed)
        if ahead:
            prefetch(model, ahead)
        held[ahead] = held_as_blocks_start(model, device, x, y)
        milliseconds[ahead] = milliseconds_per_step(model, device, x, y)
    log(f"bytes held with {PREFETCH} blocks ahead, more than by default, as each block starts:")
    log(f"{'':<9}" + "".join(f"{f'blocks.{n}':>10}" for n in range(DEPTH)))
    for number, way in enumerate(("forward", "backward")):
        log(f"{way:<9}" + "".join(f"{a - b:>10,}" for a, b in zip(held[PREFETCH][number],
                                                                  held[0][number])))
    if milliseconds[0] is not None:
        log(f"ms per step: {milliseconds[0]:.2f} by default, {milliseconds[PREFETCH]:.2f} with"
            f" {PREFETCH} blocks ahead")


def compare_starting_values(device, seed, log):
    """Log the most bytes each process holds while the values arrive, from rank 0 or from the
    seed checkpoint, and whether both give the same values."""
    models, held = {}, {}
    for way, fill in (("from rank 0", from_rank0),
                      ("from the seed checkpoint", lambda model: from_seed(model, seed))):
        models[way] = sharded_model(flat_mesh(device), device)
        held[way] = values_held(fill, models[way])
    everyone = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, held)
    with torch.device("meta"):
        whole = sum(tensor.nbytes for tensor in Net().state_dict().values())
    log(f"the whole state dict: {whole:,} bytes; the most bytes each process holds while the"
        " values arrive:")
    log(f"{'':<26}" + "".join(f"{f'rank {rank}':>10}" for rank in range(len(everyone))))
    for way in held:
        log(f"{way:<26}" + "".join(f"{each[way]:>10,}" for each in everyone))
    one, other = models.values()
    difference = max((a.full_tensor() - b.full_tensor()).abs().max().item()
                     for a, b in zip(one.parameters(), other.parameters()))
    log(f"the two ways give the same values: largest difference {difference:.1e}")


def compare_at_scale(device, seed, log):
    """Log where HSDP puts a block's weight, then train with all of this page's choices beside
    FSDP2 as the FSDP2 tutorial used it, from the same values, and log both runs' losses."""
    world_size = dist.get_world_size()
    mesh = hsdp_mesh(device, REPLICAS)
    model = sharded_model(mesh, device, recompute=True, backend=backend_for(device))
    prefetch(model, PREFETCH)
    from_seed(model, seed)
    weight = get_model_state_dict(model)["blocks.0.up.weight"]
    node, piece = mesh.get_coordinate()
    everyone = [None] * world_size
    dist.all_gather_object(everyone, (node, piece, tuple(local(weight).shape),
                                      local(weight).float().cpu().tolist()))
    log(f"HSDP, a mesh of {REPLICAS} × {world_size // REPLICAS}: blocks.0.up.weight"
        f" {tuple(weight.shape)}, placed {weight.placements}")
    for rank, (node, piece, shape, _) in enumerate(everyone):
        twins = [other for other, each in enumerate(everyone) if other != rank and each[1] == piece]
        same = all(everyone[other][3] == everyone[rank][3] for other in twins)
        log(f"rank {rank}: node {node}, piece {piece}, {shape}; the same values as rank"
            f"{'s' if len(twins) > 1 else ''} {', '.join(map(str, twins))}: {same}")
    at_scale = train(model, device)
    reference = sharded_model(flat_mesh(device), device)
    from_seed(reference, seed)
    plain = train(reference, device)
    log(f"losses, HSDP with checkpointing, {backend_for(device)} and prefetching: "
        + ", ".join(f"{loss:.6f}" for loss in at_scale))
    log("losses, FSDP2 as in the FSDP2 tutorial: " + ", ".join(f"{loss:.6f}" for loss in plain))
    log(f"largest difference: {max(abs(a - b) for a, b in zip(at_scale, plain)):.1e}")
    timed = [milliseconds_per_step(m, device, *next(global_batches(device))) for m in (model, reference)]
    if None not in timed:
        log(f"ms per step of a global batch: {timed[0]:.2f} with all of this page's choices,"
            f" {timed[1]:.2f} without")


def tour(seed):
    """A job of ``2 * REPLICAS`` processes: this page's measurements, which rank 0 logs."""
    _, world_size, device, log = this_process()
    if world_size != 2 * REPLICAS:
        raise RuntimeError(f"the measurements need {2 * REPLICAS} processes, not {world_size}")
    inputs, labels = next(global_batches(device))
    x, y = inputs.chunk(MICRO_BATCHES)[0], labels.chunk(MICRO_BATCHES)[0]
    for title, compare, args in (
        ("starting values", compare_starting_values, (seed,)),
        ("resharding after the forward", compare_resharding, (seed, x, y)),
        ("prefetching", compare_prefetching, (seed, x, y)),
        ("all together", compare_at_scale, (seed,)),
    ):
        log(f"-- {title}")
        compare(device, *args, log)
    if device.type == "cpu":
        log("-- times: measured on GPUs only, and these processes ran on the CPU")


def train_at_scale(seed):
    """The ``torchrun`` job: all of this page's choices together, from the seed checkpoint;
    a node per machine. Rank 0 logs each step's loss."""
    _, world_size, device, log = this_process()
    nodes = world_size // int(os.environ["LOCAL_WORLD_SIZE"])
    model = sharded_model(hsdp_mesh(device, nodes), device, recompute=True,
                          backend=backend_for(device))
    prefetch(model, PREFETCH)
    from_seed(model, seed)
    log(f"HSDP on {nodes} × {world_size // nodes} processes, activation checkpointing,"
        f" {backend_for(device)}, {PREFETCH} blocks prefetched; values from {Path(seed).name}")
    for step, loss in enumerate(train(model, device), start=1):
        log(f"step {step}: loss {loss:.6f}")


# %%
# Starting it with ``torchrun``
# -----------------------------
#
# Run as ``torchrun --nproc-per-node=N plot_06_fsdp2_at_scale.py``, every
# process runs the whole file, and this cell, seeing ``LOCAL_RANK``, takes
# over. With one process and no seed checkpoint in ``CHECKPOINT_DIR`` (by
# default ``fsdp2-at-scale``), it writes one and stops; otherwise all the
# processes train from it with all of this page's choices, HSDP with a node
# per machine (one node, when they all run on one machine), and rank 0 logs
# each step's loss. Without a seed checkpoint, more than one process only
# says how to write one. Each process says where it runs when it starts.

if __name__ == "__main__" and "LOCAL_RANK" in os.environ:
    seed = Path(os.environ.get("CHECKPOINT_DIR", "fsdp2-at-scale"), "seed")
    device = device_for_this_process()  # each process says where it runs, first
    print(f"rank {os.environ['RANK']}: {'nccl' if device.type == 'cuda' else 'gloo'} on {device}",
          flush=True)
    written = (seed / ".metadata").is_file()  # DCP writes it last
    if not written and os.environ["WORLD_SIZE"] != "1":
        if os.environ["RANK"] == "0":
            print(f"no seed checkpoint in {seed}: write it with one process first,"
                  " torchrun --nproc-per-node=1 plot_06_fsdp2_at_scale.py")
        sys.exit(1)
    run_rank(train_at_scale if written else write_seed, str(seed))
    sys.exit()


# %%
# .. rst-class:: collapsed
#
# How this page starts its processes
# ----------------------------------
#
# As in the previous tutorials, the build runs this file with plain
# ``python``, and the function below does for each result what ``torchrun
# --nproc-per-node=N`` would do, in the way :ref:`the DDP tutorial's launcher
# <ddp-launcher>` explains: N processes from
# ``torch.multiprocessing.start_processes`` (copies of a fork server that has
# never used CUDA or run a backward pass, or, from a notebook on a machine
# without GPUs, of the notebook's process; ``torch`` limited to one thread in
# each), a rendezvous store of its own on a port that the operating system
# picks, the variables that ``init_process_group`` and this page read, and
# each process's printed lines sent back and shown tagged with its rank,
# under a line that says where the processes ran. Your own scripts need none
# of it.


def start_method():
    """How ``launch`` starts processes here: from a fork server, spawned, or as copies of this one."""
    methods = mp.get_all_start_methods()
    if getattr(sys.modules["__main__"], "__file__", None):  # a script: they can import it
        return "forkserver" if "forkserver" in methods else "spawn"
    if "fork" not in methods:
        raise RuntimeError("on this system the processes must import the script, and a"
                           " notebook has none: run this tutorial as a script"
                           " (python plot_06_fsdp2_at_scale.py) or with torchrun")
    if torch.cuda.device_count() > 0:  # NVML: asking starts no CUDA
        raise RuntimeError("this machine has GPUs, and a copy of this notebook's process could"
                           " use none of them once the notebook has called"
                           " torch.cuda.is_available(), nor run a backward pass once the"
                           " notebook has run one: run this tutorial as a script"
                           " (python plot_06_fsdp2_at_scale.py) or with torchrun")
    return "fork"


def launch(world_size, job, *args, timeout=300.0):
    """Run ``run_rank(job, *args)`` in ``world_size`` processes.

    Return one ``(printed text, returned value, GPU name or None)`` triple
    per rank, in rank order. If a process fails, stop the others and raise
    its error.
    """
    method = start_method()
    context = mp.get_context(method)
    if method == "forkserver":  # what the fork server imports once, for every copy
        context.set_forkserver_preload(["torch", "torch._dynamo", "torch.distributed",
                                        "matplotlib.pyplot"])
    ports, results = context.SimpleQueue(), context.SimpleQueue()
    processes = mp.start_processes(
        _as_rank, args=(world_size, ports, results, job, args), nprocs=world_size,
        join=False, daemon=True, start_method=method,
    )
    reports, deadline, store = {}, time.monotonic() + timeout, None
    try:
        # The store, on a port that the operating system picks and this process holds.
        store = dist.TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False)
        for _ in range(world_size):
            ports.put(store.port)
        while not processes.join(timeout=0.1):  # raises if a process failed
            while not results.empty():
                rank, *report = results.get()
                reports[rank] = tuple(report)
            if time.monotonic() > deadline:
                raise TimeoutError(f"{world_size} processes still running after {timeout:g} s")
    finally:
        for process in processes.processes:
            process.kill()  # does nothing to those that have exited
            process.join()
        store = None  # stops the store's thread before anything is forked again
    while not results.empty():
        rank, *report = results.get()
        reports[rank] = tuple(report)
    return [reports[rank] for rank in range(world_size)]


def _as_rank(rank, world_size, ports, results, job, args):
    """Become rank ``rank`` as ``torchrun`` would make it, run the job, say on which GPU."""
    gc.freeze()  # what this copy started with, its garbage collector skips
    torch.set_num_threads(1)
    os.environ.update(
        RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size),
        LOCAL_WORLD_SIZE=str(world_size), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(ports.get()),
        TORCHELASTIC_USE_AGENT_STORE="True", TORCHELASTIC_RESTART_COUNT="0",
    )
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        value = run_rank(job, *args)
    device = device_for_this_process()
    gpu = torch.cuda.get_device_name(device) if device.type == "cuda" else None
    results.put((rank, printed.getvalue(), value, gpu))


def show(world_size, reports):
    """Print where the processes ran, then every process's lines tagged with its rank."""
    gpus = sorted({gpu for _, _, gpu in reports if gpu})
    where = f"{world_size} × {', '.join(gpus)} (nccl)" if gpus else "the CPU (gloo)"
    print(f"# {world_size} process{'es' if world_size > 1 else ''} on {where}")
    for rank, (printed, _, _) in enumerate(reports):
        for line in printed.splitlines():
            print(f"[rank {rank}] {line}")
    silent = [rank for rank, (printed, _, _) in enumerate(reports) if not printed]
    if silent and world_size > 1:  # one process is all there is: nothing to say of the others
        print(f"(ranks {silent[0]} to {silent[-1]} printed nothing)" if len(silent) > 1
              else f"(rank {silent[0]} printed nothing)")
    return [value for _, value, _ in reports]


# %%
# Results
# -------
#
# First, one process writes the seed checkpoint, as torchtitan writes its
# own: the whole model with its starting values, once.

if __name__ == "__main__":
    scratch = tempfile.TemporaryDirectory(prefix="fsdp2-at-scale-")  # removed at exit
    seed = str(Path(scratch.name, "seed"))
    show(1, launch(1, write_seed, seed))

# %%
# Then 4 processes run ``tour``: each choice of this page in turn, then all
# of them together. Only rank 0 prints.

if __name__ == "__main__":
    show(4, launch(4, tour, seed))

# %%
# What the results show
# ---------------------
#
# *Starting values.* From rank 0, rank 0 holds the whole state dict
# besides its pieces, and every other process its pieces and the largest
# tensor, a block's ``Linear`` weight, as it arrives. From the seed
# checkpoint, every process, rank 0 included, holds about what the others
# held from rank 0: its pieces and the tensor it reads. Both ways give the
# same values.
#
# *Resharding.* With ``True``, what a process holds gathered after the
# forward is the root group alone, the first and the last layer in
# bfloat16, which the backward needs at once. With ``False`` it is the
# whole model in bfloat16, twice what the process's ``float32`` pieces take
# with 4 processes; with 2, every block sharded over 2 processes instead of
# 4, half of that, and the root group. Each choice moves that memory against
# the backward's all-gathers: over 4 processes, none, or over 2.
#
# *Prefetching.* In the forward, each block 2 ahead adds the buffer of one
# more block's all-gather, a block in bfloat16, until there are no more
# blocks to ask for: two more as the first two blocks start, one more as
# the third does. In the backward, where FSDP2 already asks for the next
# block by default, 2 ahead adds one more block as the last two start. On
# the CPU this only costs memory; on GPUs it is what lets communication
# overlap computation, and the time it saves is measured there.
#
# *All together.* HSDP gives each of a node's 2 processes a half of every
# parameter, and the other node the same halves, so that each process
# holds half of the model where FSDP2 over 4 processes held a quarter.
# Trained with activation checkpointing, compiled blocks and prefetching as
# well, it computes the training of FSDP2 as the FSDP2 tutorial used it;
# the line ``largest difference`` compares their losses. The difference is
# at most rounding: the blocks compute the same operations, only the order in
# which gradients are added differs between HSDP's reduce-scatter and
# all-reduce and FSDP2's one reduce-scatter, and on GPUs Inductor's
# generated kernels round differently from PyTorch's own.
#
# What else jobs at scale need
# ----------------------------
#
# This page leaves these out; PyTorch documents each, at the address in
# parentheses:
#
# * **The embedding and the output layer in groups of their own.** The
#   root group here holds the first and the last layer whole from the
#   forward to the end of the backward. With a vocabulary of 100,000 tokens
#   these are the largest tensors of a language model, so torchtitan shards
#   the embedding alone and groups the final norm with the output layer,
#   ``fully_shard([norm, output], reshard_after_forward=False)``
#   (https://github.com/pytorch/torchtitan).
# * **Asynchronous checkpoints.** ``dcp.async_save`` copies the state dict
#   to CPU memory and writes it from another thread while training goes on
#   (https://docs.pytorch.org/docs/stable/distributed.checkpoint.html).
# * **CPU offload.** ``fully_shard(...,
#   offload_policy=CPUOffloadPolicy(pin_memory=True))`` keeps the pieces of
#   the parameters, the gradients and the optimizer's state in CPU memory,
#   copies each group to the GPU to gather it, and runs the optimizer's step
#   on the CPU
#   (https://docs.pytorch.org/docs/stable/distributed.fsdp.fully_shard.html).
# * **float16 instead of bfloat16**, on GPUs without bfloat16 (before
#   Ampere): float16's small range needs a gradient scaler, whose check for
#   infinite gradients must agree across the processes;
#   ``torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler``
#   all-reduces it (https://docs.pytorch.org/docs/stable/amp.html).
#   ``torch.cuda.is_bf16_supported(including_emulation=False)`` says whether
#   a GPU has bfloat16.
# * **Call the model, not its** ``forward``: FSDP2 gathers a group in a
#   forward hook, which ``model(x)`` runs and ``model.forward(x)`` skips; for
#   another method, such as ``generate``,
#   ``register_fsdp_forward_method(model, "generate")`` adds the hooks
#   (https://docs.pytorch.org/docs/stable/distributed.fsdp.fully_shard.html).
# * **Timeouts.** A collective that waits longer than the process group's
#   timeout (``init_process_group(..., timeout=...)``, 10 minutes by default
#   with NCCL) ends the job; torchtitan shortens it after the first step,
#   once compilation is done, so that a stuck job fails sooner
#   (https://docs.pytorch.org/docs/stable/distributed.html).
# * **The flight recorder.** With ``TORCH_NCCL_TRACE_BUFFER_SIZE`` set,
#   NCCL process groups record their last collectives, and
#   ``TORCH_NCCL_DUMP_ON_TIMEOUT=1`` writes them out when one times out,
#   which shows the rank that a stuck job waits for
#   (https://docs.pytorch.org/tutorials/prototype/flight_recorder_tutorial.html;
#   the variables:
#   https://docs.pytorch.org/docs/stable/torch_nccl_environment_variables.html).
# * **Shared memory in containers.** Processes on one machine pass data
#   through shared memory, ``/dev/shm``: NCCL between the GPUs of a node, and
#   ``DataLoader``'s worker processes among others. Docker limits it to
#   64 MB unless the container starts with ``--ipc=host`` or a larger
#   ``--shm-size`` (https://github.com/pytorch/pytorch#docker-image).
#
# What to remember
# ----------------
#
# * Prepare each block in torchtitan's order, activation checkpointing,
#   ``torch.compile``, ``fully_shard``, and shard the whole model last.
# * ``reshard_after_forward`` trades memory between forward and backward
#   for the backward's all-gathers: ``True`` (the default), ``False`` (the
#   root's default; the last layers; pipeline parallelism), or an ``int``
#   to reshard within a node.
# * Prefetching asks for gathers early; on GPUs that is what overlaps
#   communication with computation, and each block further ahead is one more
#   block gathered at once.
# * Give the pieces their values without a whole copy on rank 0: from a
#   seed checkpoint that one process wrote, from pretrained weights through
#   DCP, or initialised in place on GPUs.
# * On several nodes, HSDP: a mesh of ``(nodes, gpus_per_node)`` named
#   ``("replicate", "shard")``, placements ``(Replicate(), Shard(0))``.
