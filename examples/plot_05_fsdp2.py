"""
.. _fsdp2-tutorial:

Shard the model with FSDP2
==========================

DDP keeps a whole copy of the model in every process: all the parameters,
all their gradients and all of the optimizer's state. With AdamW in
``float32`` that is 16 bytes per parameter (4 for the parameter, 4 for its
gradient, 8 for AdamW's two running averages) in every process, however
many processes there are. When that does not fit on one GPU, adding GPUs
does not help. FSDP2, ``torch.distributed.fsdp.fully_shard``, splits each of
them into ``WORLD_SIZE`` shards and gives each process one: with N processes,
each holds about ``1/N`` of the model, of its gradients and of the
optimizer's state.

This page shows the steps of a training script with FSDP2 on a small model
made of repeated blocks: build it on the ``meta`` device, shard each block
and then the whole model, give the shards memory and their starting values,
and train with mixed precision, gradient accumulation and gradient clipping.
It measures what each process holds, beside DDP, and what activation
checkpointing and each of FSDP2's two ways to accumulate gradients change in
it; saves the whole training state with Distributed Checkpoint (DCP),
resumes a job stopped with 2 processes with 4 and compares it with an
uninterrupted run, and compares the training of 2 processes with that of
one. :ref:`The next tutorial <fsdp2-at-scale-tutorial>` goes on with what
jobs on many GPUs add: when to reshard and what to prefetch, starting
values without a whole copy on rank 0, ``torch.compile`` per block, and
HSDP. Run this one with

.. code-block:: bash

   torchrun --nproc-per-node=2 plot_05_fsdp2.py

Each process works on a GPU of its own, with the ``nccl`` backend, when the
machine has at least one GPU per process; otherwise all of them work on the
CPU, with the ``gloo`` backend (FSDP2 runs there in PyTorch 2.13), hide the
machine's GPUs from themselves so that nothing in them uses one, and say
so. The outputs below come from running it with 2 and 4 processes by the
same rule, and the comparison with one process on that process's GPU if
the machine had one, on the machine that built this site unless the line
above a result says it was recorded on another; that line says where each
result ran. The page is written for PyTorch 2.13; the first output shows the
version that ran it.
"""

# %%
# Imports and settings
# --------------------
#
# A step of the training sees ``GLOBAL_BATCH`` samples over all processes,
# in ``MICRO_BATCHES`` forward and backward passes (gradient accumulation).
# The run that is interrupted stops after ``STOPPED_AFTER`` of its ``STEPS``
# steps.

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
    get_state_dict,
    set_model_state_dict,
    set_state_dict,
)
from torch.distributed.checkpoint.stateful import Stateful
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.distributed.tensor import DTensor
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

if __name__ == "__main__":  # not again in each process the page starts
    print("PyTorch", torch.__version__)

SEED = 0
GLOBAL_BATCH = 240
MICRO_BATCHES = 2
STEPS = 6
STOPPED_AFTER = 3
LEARNING_RATE = 0.003
MAX_NORM = 1.5
WIDTH, DEPTH = 64, 4

# %%
# The task and a model of repeated blocks
# ---------------------------------------
#
# The three spirals of the previous tutorials, and a network in the shape of
# a transformer's, without attention: a layer that widens the 2 coordinates
# to ``WIDTH`` numbers, ``DEPTH`` identical residual blocks (a ``LayerNorm``,
# a ``Linear`` to four times the width, GELU, a ``Linear`` back, added to the
# block's input), and a layer that scores the 3 arms. Real models repeat such
# a block dozens of times, and FSDP2 is applied block by block.


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


# %%
# Build, shard, then give memory and values
# -----------------------------------------
#
# ``fully_shard(module, mesh=mesh)`` replaces every parameter of ``module``
# with a ``DTensor``: a tensor that knows it is distributed over a *device
# mesh*, and how. The mesh here is ``init_device_mesh(device.type,
# (WORLD_SIZE,))``: all the processes in one row, on the device type the
# processes use. Pass it explicitly: without ``mesh=``, ``fully_shard`` makes
# a mesh on the machine's accelerator whatever the process group's backend,
# so on a machine with a GPU, processes meant for the CPU and ``gloo`` would
# move their parameters to CUDA anyway. The placement is ``Shard(0)``: each
# parameter is cut along its first dimension into ``WORLD_SIZE`` pieces, as
# ``torch.chunk`` would cut it, and each process keeps only its own piece.
#
# Each call makes one group of parameters, which FSDP2 gathers and frees
# together. Calling it on every block first and on the whole model last
# makes one group per block, and one for what is left (the first and the
# last layer), the *root* group:
#
# * Just before a block runs, FSDP2 *all-gathers* its group: every process
#   receives the other pieces and, for a moment, holds that block whole.
#   After the block's forward it frees them again, and gathers them once
#   more for the backward. On GPUs the gathers run on CUDA streams of their
#   own, so the gather of the next block can overlap the computation of this
#   one: in the forward because the CPU issues work ahead of the GPU, in the
#   backward because FSDP2 asks for the next block's gather before it is
#   needed. On the CPU with ``gloo``, as in the runs shown on this page, each
#   gather ends before the block computes: nothing overlaps. The root group is
#   the exception: by default it stays whole from the forward to the end of
#   the backward, which needs it again at once (``reshard_after_forward``).
#   So at any time a process holds its shards, the root group whole, and
#   one or two blocks whole.
# * After a block's backward, FSDP2 *reduce-scatters* its gradients: they are
#   averaged over the processes, as DDP averages them, but each process
#   receives only the piece that matches its parameters.
# * The optimizer, built on the sharded parameters, updates each process's
#   pieces only, so its state is sharded too.
#
# A model too large for one process cannot be built whole first. So it is
# built on the ``meta`` device, which records shapes and allocates nothing,
# sharded there, and only then given memory for this process's shards with
# ``model.to_empty(device=device)``, which leaves their values undefined.
# The values come last: here rank 0 makes them, as one process would with
# the seed (for a large model, it would read them from a checkpoint, or each
# process would read only its shards with DCP, below), and
# ``set_model_state_dict(..., full_state_dict=True, broadcast_from_rank0=True)``
# hands them out. Only rank 0 needs the whole state dict, in its CPU memory
# if it likes; the others pass an empty one. It then sends one tensor at a
# time, whole, to every process, which receives it into a tensor of its
# full size on its device and keeps only its piece: besides its shards, each
# process needs room for the largest tensor of the model, and rank 0 for the
# whole model. FSDP2 itself copies no parameter from rank 0, unlike DDP:
# without this step, the pieces would hold whatever the memory that
# ``to_empty`` gave them held.
#
# ``precision`` chooses the mixed precision, explained below; ``None`` trains
# in ``float32``.


def starting_values():
    """The values a ``Net`` starts with in one process, after ``torch.manual_seed(SEED)``."""
    torch.manual_seed(SEED)
    return Net().state_dict()


def sharded_model(device, precision=None, recompute=False):
    """A ``Net`` built on the ``meta`` device, sharded per block and at the root, given values;
    with ``recompute``, each block checkpoints its activations."""
    mesh = init_device_mesh(device.type, (dist.get_world_size(),))
    blocks, root = policies(precision)
    with torch.device("meta"):
        model = Net()  # shapes only, no memory
    for number, block in enumerate(model.blocks):
        if recompute:  # activation checkpointing, before fully_shard (see below)
            block = model.blocks[number] = checkpoint_wrapper(block)
        fully_shard(block, mesh=mesh, mp_policy=blocks)
    fully_shard(model, mesh=mesh, mp_policy=root)
    model.to_empty(device=device)  # memory for this process's pieces, no values yet
    full = starting_values() if dist.get_rank() == 0 else {}
    options = StateDictOptions(full_state_dict=True, broadcast_from_rank0=True)
    set_model_state_dict(model, full, options=options)  # each process gets its pieces
    return model


# %%
# Mixed precision
# ---------------
#
# FSDP2 does mixed precision itself, by layer group rather than by operation as
# ``torch.autocast`` does. With ``param_dtype=torch.bfloat16``, each process
# casts its ``float32`` pieces to bfloat16 as it copies them into the
# all-gather's buffer, which FSDP2 frees once it has copied the gathered
# parameters out of it, and the block computes with those bfloat16 parameters,
# freed when the group is resharded. The sharded parameters that the optimizer
# updates stay in ``float32``: there is no second, permanent copy of the model,
# as there is in mixed precision that keeps ``float32`` master weights beside
# bfloat16 ones. ``reduce_dtype=torch.float32`` averages the gradients in
# ``float32``. And ``output_dtype=torch.float32``, on the root group only,
# casts the model's output back: the scores, and so the loss and its average
# over the processes, are ``float32`` numbers (without it they would be
# bfloat16, with 2 to 3 significant digits). A block's output can stay
# bfloat16: the next block would cast a ``float32`` input to bfloat16 anyway
# (``cast_forward_inputs``, on by default), so a cast back to ``float32`` in
# between would only cost time and memory.


def policies(precision):
    """The mixed-precision policies of the blocks and of the root (no change for ``None``)."""
    if precision is None:
        return MixedPrecisionPolicy(), MixedPrecisionPolicy()
    blocks = MixedPrecisionPolicy(param_dtype=precision, reduce_dtype=torch.float32)
    root = MixedPrecisionPolicy(param_dtype=precision, reduce_dtype=torch.float32,
                                output_dtype=torch.float32)
    return blocks, root


# %%
# Activation checkpointing
# ------------------------
#
# The 16 bytes per parameter leave out the *activations*: the tensors that the
# forward pass saves for the backward. A ``Linear`` saves its input, to
# compute its weight's gradient, GELU saves its input, ``LayerNorm`` its
# input and two numbers per row. Their size grows with the rows a process
# computes at once (the batch times the sequence length, in a language
# model), not with the parameters, and sharding does not shrink them: at the
# sequence lengths of real models they can take more memory than the sharded
# training state, and then sharding alone does not make the model fit.
# Activation checkpointing trades them for computation: a checkpointed block
# saves only its input, and the backward pass, when it reaches the block,
# runs the block's forward again to recompute what it needs.
#
# Like ``fully_shard``, it is applied block by block: ``checkpoint_wrapper``
# (in ``torch.distributed.algorithms._checkpoint.checkpoint_wrapper``, which
# torchtitan uses) wraps a block so that each call goes through
# ``torch.utils.checkpoint.checkpoint`` with ``use_reentrant=False``, and
# ``fully_shard`` then shards the wrapper. torchtitan applies activation
# checkpointing, then ``torch.compile``, then ``fully_shard`` to each block,
# in that order; :ref:`the next tutorial <fsdp2-at-scale-tutorial>` adds the
# compilation. The wrapper adds ``_checkpoint_wrapped_module`` to the names
# of the parameters inside the model, but not to the keys of its state dict,
# so its checkpoints do not change. ``sharded_model(..., recompute=True)``
# checkpoints every block; the recipe on this page does not, and the section
# :ref:`fsdp2-step-memory` measures what it saves.


# %%
# What every process runs
# -----------------------
#
# ``run_rank`` is that of the previous tutorial (a GPU per process when the
# machine has enough, else the CPU), with one addition: it calls
# ``gc.collect()`` before it destroys the group. FSDP2's state and the
# modules it shards refer to each other, so ``del model`` alone leaves them,
# and the process group they hold, alive until Python's garbage collector
# next runs; ``gc.collect()`` frees them while the group still exists, as the
# DDP tutorial does with its model.


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
# A step: accumulation and clipping
# ---------------------------------
#
# Each process loads its share of every global batch through a
# ``DistributedSampler``, and splits it into ``MICRO_BATCHES`` micro-batches,
# each with its own forward and backward pass. Each micro-batch's loss is
# divided by their number, so that the sum of their gradients is the
# gradient of the mean over the global batch. FSDP2 adds up the
# micro-batches' gradients in one of two ways, which ``accumulate`` writes
# out:
#
# * ``"sharded"``, the default, which torchtitan uses and so does the recipe
#   on this page: after each micro-batch's backward, FSDP2 reduce-scatters
#   every group's gradient and adds this process's piece to the sharded
#   ``.grad``. Gradients stay sharded, at the cost of ``MICRO_BATCHES``
#   reduce-scatters per group and step.
# * ``"whole"``: ``model.set_requires_gradient_sync(False)`` on all but the
#   last micro-batch (FSDP2's counterpart of DDP's ``no_sync``) skips their
#   reduce-scatters. Each process adds up the whole, unsharded gradient of
#   every group, in the policy's ``reduce_dtype`` (``float32`` here), and the
#   last micro-batch reduce-scatters the sum: one reduce-scatter per group
#   and step, but a whole gradient held from the first micro-batch to the
#   last, 4 bytes per parameter as in DDP, whatever the number of processes.
#   ``model.set_is_last_backward(False)`` on those micro-batches tells FSDP2
#   that more backward passes follow: at the end of theirs, it does not wait
#   for pending gradient reductions nor clear the order it recorded for
#   prefetching in the backward.
# * ``"whole, gathered"`` adds ``model.set_reshard_after_backward(False)``:
#   each group also stays gathered after its backward, so that the next
#   micro-batch's forward gathers nothing (its backward still does, since
#   the blocks reshard after their forward); between micro-batches each
#   process then holds the whole model as well as its whole gradient.
#
# The section :ref:`fsdp2-step-memory` measures what a process holds each
# way.
#
# ``torch.nn.utils.clip_grad_norm_`` works on the sharded gradients as it does
# on plain ones while all of them are sharded over one mesh, as here: the
# norm it computes over ``DTensor`` pieces is the norm of the whole gradient,
# a ``DTensor`` itself (``full_tensor()`` gives its value), and it scales
# every piece by the same factor. With gradients on several meshes (FSDP2
# beside tensor or pipeline parallelism) it cannot stack their norms, and
# the norm must be reduced mesh by mesh. The learning rate
# warms up over the first steps (``LambdaLR``).


def micro_batches(inputs, labels):
    """This process's share of a global batch, in ``MICRO_BATCHES`` pieces."""
    return list(zip(inputs.chunk(MICRO_BATCHES), labels.chunk(MICRO_BATCHES)))


ACCUMULATE = ("sharded", "whole", "whole, gathered")


def accumulate(model, pieces, way="sharded", after=None):
    """Forward and backward for each micro-batch of ``pieces``, their gradients added up one of
    the ``ACCUMULATE`` ways; return the sum of their losses. ``after(number)`` runs after each."""
    total = torch.zeros((), device=pieces[0][0].device)
    for number, (x, y) in enumerate(pieces, start=1):
        last = number == len(pieces)
        if way != "sharded":
            model.set_requires_gradient_sync(last)  # no reduce-scatter before the last
            model.set_is_last_backward(last)
        if way == "whole, gathered":
            model.set_reshard_after_backward(last)  # no gather in the next forward
        loss = F.cross_entropy(model(x), y) / len(pieces)
        loss.backward()
        total += loss.detach()
        if after:
            after(number)
    return total


def train_step(model, optimizer, scheduler, inputs, labels):
    """One optimizer step over the global batch; return its mean loss and gradient norm."""
    optimizer.zero_grad()
    total = accumulate(model, micro_batches(inputs, labels))
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
    optimizer.step()
    scheduler.step()
    dist.all_reduce(total)  # the losses of all processes' shares, summed
    return total.item() / dist.get_world_size(), norm.full_tensor().item()


def warm_up(optimizer):
    """A learning rate that grows to ``LEARNING_RATE`` over the first 3 steps."""
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / 3))


def global_batches(device, steps_done=0):
    """This process's share of each global batch, from step ``steps_done + 1`` on."""
    sampler = DistributedSampler(train_set, seed=SEED)  # epoch 0: the first 10 steps
    per_process = GLOBAL_BATCH // dist.get_world_size()
    loader = DataLoader(train_set, batch_size=per_process, sampler=sampler)
    for inputs, labels in itertools.islice(loader, steps_done, None):
        yield inputs.to(device), labels.to(device)


# %%
# The whole training state, in one checkpoint
# -------------------------------------------
#
# A job that resumes needs more than the model: the optimizer's state, the
# learning-rate schedule, the number of steps done and each process's random
# state. The number of steps is also the position in the data: the sampler
# deals the same global batches in the same order whatever the number of
# processes, so ``global_batches`` goes on after the batches already done
# (``itertools.islice`` loads them and drops them, which is quick here; a
# loader with worker processes, or slow to load, would save its own position
# instead, as ``torchdata``'s ``StatefulDataLoader`` can). DCP saves
# ``Stateful`` objects: it calls their ``state_dict()`` when it saves and
# their ``load_state_dict()`` when it loads. Each process gives it two:
#
# * ``TrainingState``: the model and the optimizer, whose state
#   ``get_state_dict(model, optimizer)`` returns as sharded ``DTensor``\ s,
#   the schedule and the steps. ``dcp.save`` has every process write its own
#   pieces, in parallel, into one folder: a file per process and a
#   ``.metadata`` file that says where each piece is. No tensor is gathered,
#   so this works for models that no process could hold whole. Every process
#   must be able to write to that folder, and, to resume, to read all of it:
#   on several machines, a shared file system.
# * ``dcp.load`` reads into a sharded model and optimizer of *any* number of
#   processes: each reads only the parts of the files that overlap its own
#   pieces. ``set_state_dict`` puts them in place. So a job saved by 2
#   processes can go on with 4.
# * A value that every process saves under the same key, such as the steps,
#   the schedule or AdamW's step counts, DCP writes once: going through the
#   keys, it gives each such value to the process that has been given the
#   least to write so far (``DefaultSavePlanner``'s
#   ``dedup_save_to_lowest_rank=False``, the default), and drops the other
#   processes' copies. The copy kept need not be rank 0's, which is right only
#   for values that are the same in every process.
# * The random state is not: only rank 0 seeds its generator here (to make
#   the starting values), and on a GPU each process also has the generator of
#   its own GPU, which dropout draws from. So ``RandomState`` saves each
#   process's CPU generator, and on a GPU its CUDA generator, under a key of
#   its own that names its rank and the number of processes. A job with as
#   many processes restores each process's own; a job with another number
#   finds none saved for its ranks, and its processes keep their own, which
#   rank 0 says when it resumes.


class TrainingState(Stateful):
    """What every process of a resumed job needs alike: model, optimizer, schedule, steps done."""

    def __init__(self, model, optimizer, scheduler):
        self.model, self.optimizer, self.scheduler = model, optimizer, scheduler
        self.steps = 0

    def state_dict(self):
        model, optimizer = get_state_dict(self.model, self.optimizer)
        return {"model": model, "optimizer": optimizer, "scheduler": self.scheduler.state_dict(),
                "steps": self.steps}

    def load_state_dict(self, state):
        set_state_dict(self.model, self.optimizer, model_state_dict=state["model"],
                       optim_state_dict=state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.steps = state["steps"]


class RandomState(Stateful):
    """This process's random number generators: the CPU's and, on a GPU, that GPU's."""

    def __init__(self, device):
        self.device = device

    def state_dict(self):
        state = {"cpu": torch.get_rng_state()}
        if self.device.type == "cuda":
            state["cuda"] = torch.cuda.get_rng_state(self.device)
        return state

    def load_state_dict(self, state):
        torch.set_rng_state(state["cpu"])
        if "cuda" in state:
            torch.cuda.set_rng_state(state["cuda"], self.device)


def random_key(rank=None):
    """The key of a process's random state: its rank and the number of processes."""
    return f"random_{dist.get_rank() if rank is None else rank}_of_{dist.get_world_size()}"


def checkpointed(state, device):
    """What a checkpoint holds for this process: the training state and its random state."""
    return {"training": state, random_key(): RandomState(device)}


def load_training(checkpoint, state, device):
    """Load ``checkpoint`` into ``state``, and this process's random state if the checkpoint
    holds one for it (saved by as many processes, on the same kind of device); say which."""
    wanted = checkpointed(state, device)
    saved = dcp.FileSystemReader(checkpoint).read_metadata().state_dict_metadata
    mine = all(f"{random_key()}.{name}" in saved for name in wanted[random_key()].state_dict())
    if not mine:
        del wanted[random_key()]  # each process keeps its own
    dcp.load(wanted, checkpoint_id=checkpoint)
    if mine:
        return "random states restored"
    return (f"no random state saved for rank {dist.get_rank()} of {dist.get_world_size()}"
            " processes: each keeps its own")


def files_of(checkpoint, *keys):
    """The file of ``checkpoint`` that holds each of ``keys`` (values saved whole)."""
    storage = dcp.FileSystemReader(checkpoint).read_metadata().storage_data
    found = {index.fqn: info.relative_path for index, info in storage.items()}
    return [found[key] for key in keys]


def newest_checkpoint(folder):
    """The checkpoint of the most steps in ``folder``, or None."""
    found = sorted(Path(folder).glob("step-*"), key=lambda p: int(p.name.split("-")[1]))
    return found[-1] if found else None


# %%
# What each process holds
# -----------------------
#
# ``holdings`` counts, in one process, the numbers of its parameters, of its
# gradients and of AdamW's state, its pieces only. ``with_ddp`` trains one
# step of the same model with DDP, for comparison, and counts the same.
#
# On a GPU, each also reports the most memory the process had allocated
# (``torch.cuda.max_memory_allocated``) less what it held before it built the
# model. ``count_memory_from_here`` first runs a small matrix product and its
# backward, in ``float32`` and in bfloat16, so that cuBLAS allocates the
# workspace it then keeps: megabytes, more than this whole model, which would
# otherwise fill the column for FSDP2 and DDP alike. What remains is the
# model's: its shards (DDP: its whole copy), the groups gathered for a
# moment, the gradients, AdamW's state, the activations and the buffers of
# the collectives that PyTorch allocates; the CUDA context and NCCL's own
# buffers are not in it. Besides its shards, a process holds for a moment a
# group gathered whole and that group's whole gradient before its
# reduce-scatter, which do not shrink with the number of processes; so the
# peak falls less than the counts.


def count_memory_from_here(device):
    """On a GPU: the memory allocated now, after cuBLAS made its workspace; the peak counts from
    here. None elsewhere."""
    if device.type != "cuda":
        return None
    x = torch.ones(8, 8, device=device, requires_grad=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        y = (x @ x).sum()
    (y + (x @ x).sum()).backward()  # products in bfloat16 and float32, forward and backward
    del x, y
    torch.cuda.synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)
    return torch.cuda.memory_allocated(device)


def local(tensor):
    """This process's piece of a sharded tensor, or the tensor itself."""
    return tensor.to_local() if isinstance(tensor, DTensor) else tensor


def holdings(model, optimizer, device, start):
    """The numbers this process holds: parameters, gradients, optimizer state; on a GPU, the
    peak MiB above ``start`` (``count_memory_from_here``)."""
    parameters = sum(local(p).numel() for p in model.parameters())
    gradients = sum(local(p.grad).numel() for p in model.parameters() if p.grad is not None)
    state = sum(local(v).numel() for per_parameter in optimizer.state.values()
                for v in per_parameter.values() if torch.is_tensor(v) and v.ndim)
    return parameters, gradients, state, peak_above(device, start)


def peak_above(device, start):
    """On a GPU, the peak MiB allocated above ``start`` (``count_memory_from_here``); else None."""
    if device.type != "cuda":
        return None
    return (torch.cuda.max_memory_allocated(device) - start) / 2**20


def with_ddp(device):
    """One step of the same model with DDP; what this process then holds."""
    start = count_memory_from_here(device)
    torch.manual_seed(SEED)
    model = DDP(Net().to(device), device_ids=[device] if device.type == "cuda" else None)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE)
    inputs, labels = next(global_batches(device))
    F.cross_entropy(model(inputs), labels).backward()
    optimizer.step()
    found = holdings(model, optimizer, device, start)
    del model, optimizer
    return found


def held_table(fsdp, ddp, log):
    """Log, per process, what FSDP2 and DDP hold; return it, every process's."""
    everyone = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, (fsdp, ddp))
    gpu = fsdp[3] is not None
    log(f"{'numbers held':<18}{'parameters':>11}{'gradients':>10}{'AdamW state':>12}"
        + ("  peak MiB above start" if gpu else ""))
    rows = [(f"FSDP2, rank {rank}", mine) for rank, (mine, _) in enumerate(everyone)]
    rows += [(f"DDP, rank {rank}", theirs) for rank, (_, theirs) in enumerate(everyone)]
    for name, (parameters, gradients, state, peak) in rows:
        log(f"{name:<18}{parameters:>11}{gradients:>10}{state:>12}"
            + (f"{peak:>22.2f}" if gpu else ""))
    return everyone


# %%
# Pieces, and a block while it runs
# ---------------------------------
#
# ``describe`` prints, for a few parameters, the full shape, the placement and
# the shape of each process's piece, collected from all of them with
# ``all_gather_object``, and how many numbers each process holds in all. A
# forward pre-hook, which runs after FSDP2's own, looks at a block's weight
# while that block runs.

SHOWN = ("embed.weight", "blocks.0.norm.weight", "blocks.0.up.weight", "blocks.0.down.weight",
         "head.weight", "head.bias")


def describe(model, log):
    """Log the pieces of the ``SHOWN`` parameters in every process; return them all."""
    pieces = {name: tuple(local(p).shape) for name, p in model.named_parameters()}
    everyone = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, pieces)
    log(f"{'parameter':<22}{'shape':<11}{'placement':<14}pieces, rank 0 first")
    shapes = dict(model.named_parameters())
    for name in SHOWN:
        runs = []  # "3 × (1, 128), (0, 128)"
        for shape in (str(each[name]) for each in everyone):
            if runs and runs[-1][1] == shape:
                runs[-1][0] += 1
            else:
                runs.append([1, shape])
        listed = ", ".join(shape if n == 1 else f"{n} × {shape}" for n, shape in runs)
        parameter = shapes[name]
        log(f"{name:<22}{str(tuple(parameter.shape)):<11}{parameter.placements[0]!r:<14}{listed}")
    held = [sum(math.prod(shape) for shape in each.values()) for each in everyone]
    log(f"numbers held: {' + '.join(map(str, held))} = {sum(held)}, one model")
    return everyone


def watch_a_block(model, log):
    """Log, once, what a block's weight is while the block runs."""

    def during(module, args):
        w = module.weight
        log(f"while blocks.1 runs: blocks.1.up.weight is a {type(w).__name__} of"
            f" {tuple(w.shape)}, {w.dtype}")
        handle.remove()

    handle = model.blocks[1].up.register_forward_pre_hook(during)


# %%
# The recipe
# ----------
#
# ``recipe`` puts the pieces together: it builds and shards the model,
# makes the optimizer and the schedule, resumes from a checkpoint if it is
# given one, trains up to ``until`` steps, logging each step's loss and the
# gradient's norm before clipping, and saves the whole training state after
# the steps in ``save_after``. Last, it writes the model's full state dict
# on rank 0 (``get_model_state_dict`` with ``full_state_dict=True`` and
# ``cpu_offload=True`` gathers it there; the other processes get an empty
# dict): one ordinary file, which loads into a ``Net`` without FSDP2, for
# evaluation or inference, and which this page compares.


def recipe(folder, precision=torch.bfloat16, resume_from=None, until=STEPS, save_after=(),
           show=False):
    """Train with FSDP2 from the start or from a checkpoint; return what it did.

    With ``show``, it also logs the pieces (``describe``) and, after training,
    what each process holds beside DDP.
    """
    rank, world_size, device, log = this_process()
    start = count_memory_from_here(device)
    model = sharded_model(device, precision)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE)
    state = TrainingState(model, optimizer, warm_up(optimizer))
    record = {"losses": {}}
    if resume_from:
        random = load_training(resume_from, state, device)  # into these pieces
        log(f"resumed from {Path(resume_from).name}: {state.steps} steps done; {random}")
    if show:
        record["pieces"] = describe(model, log)
    watch_a_block(model, log)
    for inputs, labels in global_batches(device, state.steps):
        if state.steps == until:
            break
        loss, norm = train_step(model, optimizer, state.scheduler, inputs, labels)
        state.steps += 1
        record["losses"][state.steps] = loss
        log(f"step {state.steps}: loss {loss:.6f}, gradient norm {norm:.4f}"
            + (f", clipped to {MAX_NORM:g}" if norm > MAX_NORM else ""))
        if state.steps in save_after:
            checkpoint = Path(folder, f"step-{state.steps}")
            dcp.save(checkpointed(state, device), checkpoint_id=checkpoint)
            log(f"saved {checkpoint.name}: " + ", ".join(sorted(p.name for p in checkpoint.iterdir())))
            if show and state.steps == save_after[0]:
                steps, *randoms = files_of(checkpoint, "training.steps", *(
                    f"{random_key(r)}.cpu" for r in range(world_size)))
                log(f"in {checkpoint.name}, the steps that every process saved are written once,"
                    f" in {steps}; the random states of ranks 0 to {world_size - 1} in"
                    f" {', '.join(randoms)}")
    if show:
        w = model.blocks[1].up.weight
        log(f"after it: blocks.1.up.weight is a {type(w).__name__} with a local piece of"
            f" {tuple(local(w).shape)}; AdamW's exp_avg for it:"
            f" {tuple(local(optimizer.state[w]['exp_avg']).shape)}")
        fsdp = holdings(model, optimizer, device, start)
    options = StateDictOptions(full_state_dict=True, cpu_offload=True)
    full = get_model_state_dict(model, options=options)  # gathered on rank 0, {} elsewhere
    if rank == 0:
        torch.save(full, Path(folder, "model.pt"))
    dist.barrier()
    del model, optimizer, state, full
    gc.collect()  # the sharded model goes before DDP's, and before the group
    if show:
        record["held"] = held_table(fsdp, with_ddp(device), log)
    return record


def shard_train_and_compare(folder):
    """A tab: the pieces, the recipe with a checkpoint midway, what each process holds."""
    return recipe(folder, save_after=(STOPPED_AFTER, STEPS), show=True)


def resume(folder, checkpoint):
    """Go on from ``checkpoint``, to ``STEPS`` steps, with this job's number of processes."""
    return recipe(folder, resume_from=checkpoint)["losses"]


def in_float32(folder):
    """The recipe without mixed precision."""
    return recipe(folder, precision=None)["losses"]


def train_alone(folder):
    """The same steps in one process, without FSDP2, in float32; save the model."""
    _, _, device, _ = this_process()
    torch.manual_seed(SEED)
    model = Net().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE)
    scheduler = warm_up(optimizer)
    losses = {}
    for step, (inputs, labels) in enumerate(itertools.islice(global_batches(device), STEPS), 1):
        optimizer.zero_grad()
        pieces = micro_batches(inputs, labels)
        losses[step] = 0.0
        for x, y in pieces:
            loss = F.cross_entropy(model(x), y) / len(pieces)
            loss.backward()
            losses[step] += loss.item()
        torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
        optimizer.step()
        scheduler.step()
    torch.save(model.state_dict(), Path(folder, "model.pt"))
    return losses


# %%
# Starting it with ``torchrun``
# -----------------------------
#
# Run as ``torchrun --nproc-per-node=N plot_05_fsdp2.py``, every process runs
# the whole file, and this cell, seeing ``LOCAL_RANK``, runs the recipe with
# them all, saving the training state after every third step in
# ``CHECKPOINT_DIR`` (by default ``fsdp2-checkpoint``), and stops there. Run
# again, it goes on from the newest checkpoint, with as many processes as it
# is given this time. Each process uses its own GPU when the machine has one
# per process, and the CPU with ``gloo`` otherwise; each says which when it
# starts, and rank 0 says why when it is the CPU.

if __name__ == "__main__" and "LOCAL_RANK" in os.environ:
    folder = os.environ.get("CHECKPOINT_DIR", "fsdp2-checkpoint")
    os.makedirs(folder, exist_ok=True)
    newest = newest_checkpoint(folder)
    device = device_for_this_process()  # each process says where it runs, first
    print(f"rank {os.environ['RANK']}: {'nccl' if device.type == 'cuda' else 'gloo'} on {device}",
          flush=True)
    run_rank(recipe, folder, torch.bfloat16, newest, STEPS, range(3, STEPS + 1, 3))
    sys.exit()


# %%
# .. rst-class:: collapsed
#
# How this page starts its processes
# ----------------------------------
#
# As in the previous tutorial, the build runs this file with plain
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
                           " (python plot_05_fsdp2.py) or with torchrun")
    if torch.cuda.device_count() > 0:  # NVML: asking starts no CUDA
        raise RuntimeError("this machine has GPUs, and a copy of this notebook's process could"
                           " use none of them once the notebook has called"
                           " torch.cuda.is_available(), nor run a backward pass once the"
                           " notebook has run one: run this tutorial as a script"
                           " (python plot_05_fsdp2.py) or with torchrun")
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
# .. rst-class:: gpu-tabs
#
# Results
# -------
#
# Each tab runs the recipe with bfloat16 mixed precision and that many
# processes: the pieces, the block while it runs, the ``STEPS`` steps with
# their loss and gradient norm and the checkpoints (for the first, which
# file holds the steps and each random state), the block after training,
# and what each process then holds, FSDP2 beside one step of DDP.
# Only rank 0 prints.

if __name__ == "__main__":
    scratch = tempfile.TemporaryDirectory(prefix="fsdp2-")  # removed at exit
    folder = scratch.name  # the checkpoints of this page
runs = {}


def run_with(world_size):
    """Run a tab's recipe with ``world_size`` processes and show what rank 0 logged."""
    checkpoints = os.path.join(folder, f"{world_size}-processes")
    os.makedirs(checkpoints)
    runs[world_size] = show(world_size, launch(world_size, shard_train_and_compare, checkpoints))[0]


# %%
# 2 processes
# ^^^^^^^^^^^
#
# 256 rows cut in two: 128 each. The last layer's 3 rows cannot be cut
# evenly: rank 0 keeps 2, rank 1 keeps 1. Each process holds half of the
# parameters, half of the gradients and half of AdamW's state, where DDP
# holds all of each in both.

if __name__ == "__main__":
    run_with(2)

# %%
# 4 processes
# ^^^^^^^^^^^
#
# 64 rows each; the last layer has only 3 rows, so rank 3 holds an empty
# piece of it. FSDP2 still includes it in every gather and scatter. Each
# process holds a quarter of everything; DDP's processes still hold it all.

if __name__ == "__main__":
    run_with(4)

# %%
# Which process keeps which rows
# ------------------------------
#
# The rows of a block's first weight and of the last layer's, coloured by
# the process that keeps them, for each number of processes above.

try:
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
    print("matplotlib is not installed, so the figure is skipped.")

if __name__ == "__main__" and plt is not None:
    fig, axes = plt.subplots(1, 2, figsize=(6.4, 2.2), layout="constrained")
    colours = plt.get_cmap("tab10").colors
    for ax, name in zip(axes, ("blocks.0.up.weight", "head.weight")):
        for row, (world_size, run) in enumerate(runs.items()):
            start, pieces = 0, [shape[name][0] for shape in run["pieces"]]
            for rank, rows in enumerate(pieces):
                ax.barh(row, rows, left=start, color=colours[rank], edgecolor="white")
                if rows:
                    wide = rows > 9 and 2 * rows >= sum(pieces)
                    ax.text(start + rows / 2, row, f"rank {rank}" if wide else str(rank),
                            ha="center", va="center")
                start += rows
        ax.set_yticks(range(len(runs)), [f"{n} processes" for n in runs])
        ax.invert_yaxis()
        ax.set_xlabel("rows")
        ax.set_title(f"{name}, {start} rows")
    plt.show()

# %%
# Resuming with another number of processes
# -----------------------------------------
#
# The 2-process run saved its whole training state after step
# ``STOPPED_AFTER``, as a job that is then stopped would have. A new job of 4
# processes loads that checkpoint, each process reading its own pieces, and
# goes on to step ``STEPS``; it finds no random state saved for 4 processes,
# and says so. Its losses and its final parameters (the full state dict that
# rank 0 writes) are compared with those of the uninterrupted 2-process run.


def largest_difference(path, reference):
    """The largest difference between the tensors of two saved state dicts."""
    state, other = torch.load(path, map_location="cpu"), torch.load(reference, map_location="cpu")
    return max((state[name] - other[name]).abs().max().item() for name in other)


if __name__ == "__main__":
    two = Path(folder, "2-processes")
    resumed = Path(folder, "resumed")
    resumed.mkdir()
    losses = show(4, launch(4, resume, str(resumed), str(two / f"step-{STOPPED_AFTER}")))[0]
    uninterrupted = runs[2]["losses"]
    steps = sorted(losses)
    difference = max(abs(losses[s] - uninterrupted[s]) for s in steps)
    print(f"steps {steps[0]} to {steps[-1]} resumed with 4 processes, against the uninterrupted"
          f" 2-process run: largest difference in the losses {difference:.1e}, in the parameters"
          f" {largest_difference(resumed / 'model.pt', two / 'model.pt'):.1e}")

# %%
# The two runs compute the same training: the same global batches (a step's
# 240 samples are the same whatever the number of processes, see the
# :ref:`training tutorial <ddp-training>`), the same schedule, the same
# AdamW averages. They differ only by rounding, in bfloat16 mostly: 4
# processes cut each global batch into other micro-batches, and add up
# gradients in another order.
#
# The same result as one process
# ------------------------------
#
# FSDP2 changes where the numbers are kept and the order in which the
# processes' gradients are added up; in ``float32``, what it computes is
# the training of one process, to rounding. To check that, 2 processes run
# the recipe without mixed precision, and one process without FSDP2 trains
# the same model on the same global batches, with the same micro-batches,
# clipping and schedule. Their losses and final parameters are compared;
# then the bfloat16 run's losses with the ``float32`` ones.

if __name__ == "__main__":
    exact = Path(folder, "float32")
    exact.mkdir()
    in_fp32 = show(2, launch(2, in_float32, str(exact)))[0]
    print("2 processes, float32: losses " + ", ".join(f"{in_fp32[s]:.6f}" for s in sorted(in_fp32)))

# %%
# The one process is started the same way, and so it runs on a GPU when the
# machine has one, which its first line says; then the comparisons:

if __name__ == "__main__":
    alone = Path(folder, "one-process")
    alone.mkdir()
    [by_one] = show(1, launch(1, train_alone, str(alone)))
    print("one process: losses " + ", ".join(f"{by_one[s]:.6f}" for s in sorted(by_one)))
    print(f"largest difference from one process: in the losses"
          f" {max(abs(in_fp32[s] - by_one[s]) for s in by_one):.1e}, in the parameters"
          f" {largest_difference(exact / 'model.pt', alone / 'model.pt'):.1e}")
    mixed = runs[2]["losses"]
    print(f"bfloat16 policy against float32: largest difference in the losses"
          f" {max(abs(mixed[s] - in_fp32[s]) for s in in_fp32):.1e}")

# %%
# In ``float32`` the differences are rounding, made larger in the parameters
# by AdamW: it divides a running average of each gradient by the square root
# of a running average of its square, so in the first steps every parameter
# moves by about the learning rate, however small its gradient, and a
# rounding difference in a tiny gradient is not tiny in the step.
# With the bfloat16 policy the losses differ from the ``float32`` ones in the
# second or third decimal (the last line): each block computes with bfloat16
# numbers, which keep only 2 to 3 significant digits, while the loss itself,
# computed from ``float32`` scores, loses nothing more.
#
# .. _fsdp2-step-memory:
#
# What a step holds
# -----------------
#
# Two processes build the model again and measure, each in its own memory,
# what activation checkpointing and each way to accumulate change, on the
# first global batch:
#
# * ``saved_for_backward`` runs the model's forward on one micro-batch inside
#   ``torch.autograd.graph.saved_tensors_hooks``, whose first function
#   autograd calls with every tensor it saves for the backward: it adds up
#   their bytes, each storage once, the parameters left out. That is the
#   activations' size, exactly and on any device; with ``recompute=True`` it
#   is what the checkpointed blocks keep. A forward pre-hook counts how many
#   times the second block's forward runs in the step.
# * ``held_while_accumulating`` runs the micro-batches of the step one way
#   inside ``MemTracker`` (``torch.distributed._tools.mem_tracker``), a
#   private tool of PyTorch's, which may change between releases: it counts
#   the bytes of every tensor made in its context, on any device, where the
#   CPU has no counter like ``torch.cuda.memory_allocated``. It reports what
#   the process holds after the first micro-batch, the pieces of the
#   parameters included.
#
# On a GPU, each also reports CUDA's peak over the step,
# ``torch.cuda.max_memory_allocated`` above what ``count_memory_from_here``
# found; rank 0 says when there is none to report.


def saved_for_backward(model, x):
    """The model's output for ``x``, and the bytes autograd saved for the backward while
    computing it (each storage once, the parameters left out)."""
    saved = {}

    def pack(tensor):
        parameters = {local(p).untyped_storage().data_ptr() for p in model.parameters()}
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in parameters:
            saved[storage.data_ptr()] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        output = model(x)
    return output, sum(saved.values())


def with_checkpointing(device, recompute, x, y):
    """One micro-batch's forward and backward, with or without activation checkpointing: the
    bytes saved for the backward, the second block's forward runs, the gradients, CUDA's peak."""
    start = count_memory_from_here(device)
    model = sharded_model(device, torch.bfloat16, recompute)
    second = model.blocks[1]._checkpoint_wrapped_module if recompute else model.blocks[1]
    runs = []
    second.register_forward_pre_hook(lambda module, args: runs.append(module))
    output, saved = saved_for_backward(model, x)
    F.cross_entropy(output, y).backward()
    gradients = [local(p.grad).clone() for p in model.parameters()]
    return saved, len(runs), gradients, peak_above(device, start)


def held_while_accumulating(device, way, pieces):
    """The bytes this process holds after the first micro-batch, accumulating ``way``; and
    CUDA's peak over the step."""
    start = count_memory_from_here(device)
    model = sharded_model(device, torch.bfloat16)
    after_first = []
    with MemTracker() as tracker:

        def after(number):
            if number == 1:
                after_first.append(tracker.get_tracker_snapshot()[device]["Total"])
            tracker.reset_mod_stats()  # so that it follows the model's next forward too

        accumulate(model, pieces, way, after)
    return after_first[0], peak_above(device, start)


def step_memory():
    """A job: what activation checkpointing and each way to accumulate change in what this
    process holds; log it and return it."""
    _, _, device, log = this_process()
    pieces = micro_batches(*next(global_batches(device)))
    x, y = pieces[0]
    plain, checkpointed = [with_checkpointing(device, recompute, x, y) for recompute in (False, True)]
    log(f"one micro-batch of {len(x)} rows: {plain[0]:,} bytes saved for the backward,"
        f" {checkpointed[0]:,} with activation checkpointing; blocks.1's forward ran"
        f" {plain[1]} time without it and {checkpointed[1]} times with it")
    difference = max((a - b).abs().max().item() for a, b in zip(plain[2], checkpointed[2]))
    log(f"gradients with checkpointing against without: largest difference {difference:.1e}")
    gpu = device.type == "cuda"
    log(f"{'accumulation':<17}{'bytes held after micro-batch 1':>31}"
        + ("  CUDA peak MiB" if gpu else ""))
    held = {}
    for way in ACCUMULATE:
        held[way] = held_while_accumulating(device, way, pieces)
        after_first, cuda = held[way]
        log(f"{way:<17}{after_first:>31,}" + (f"{cuda:>15.2f}" if gpu else ""))
    if gpu:
        log(f"CUDA peak MiB, one micro-batch: {plain[3]:.2f} without activation checkpointing,"
            f" {checkpointed[3]:.2f} with it")
    else:
        log("no CUDA peak to report: this process ran on the CPU")
    return {"saved": (plain[0], checkpointed[0]), "runs": (plain[1], checkpointed[1]),
            "rows": len(x), "difference": difference, "held": held}


if __name__ == "__main__":
    held = show(2, launch(2, step_memory))[0]

# %%
# Per row, a block saves 64 + 64 + 256 + 256 + 2 = 642 numbers without
# checkpointing (its input, the ``LayerNorm``'s output, the widened output
# before and after GELU, and the ``LayerNorm``'s two numbers), and only its
# 64-number input with it, all in bfloat16; what the first and the last layer
# save is the same both ways. In exchange, each checkpointed block runs its
# forward twice per micro-batch, the second time in the backward, and the
# gradients come out the same: the recomputation runs the same operations on
# the same numbers.
#
# Between micro-batches, ``"sharded"`` holds the pieces of the parameters and
# of the gradients. ``"whole"`` holds the whole ``float32`` gradient of every
# group instead of its pieces, as much as DDP holds, with any number of
# processes, and ``"whole, gathered"`` the whole bfloat16 model on top. With
# more processes the first row shrinks, and the others shrink only by the
# pieces of the parameters. Accumulating whole saves the reduce-scatters of
# all the micro-batches but the last (and with ``"whole, gathered"`` the
# all-gathers of the forwards after the first): it suits a model whose whole
# gradient, or whole gradient and parameters, fit in every process beside the
# rest, when communication is what limits the step.
#
# What to remember
# ----------------
#
# * Build the model on the ``meta`` device, ``fully_shard`` each block (or
#   each group of layers) and then the whole model, with an explicit mesh;
#   then ``to_empty(device=...)`` and the values, from rank 0 with
#   ``set_model_state_dict(..., broadcast_from_rank0=True)`` or from a DCP
#   checkpoint. FSDP2 copies nothing from rank 0 by itself.
# * Between steps, each process keeps ``1/WORLD_SIZE`` of the parameters,
#   gradients and optimizer state. Within a step it also holds whole the
#   block it computes (in the backward, with the next one, gathered ahead),
#   the root group from its forward to the end of the backward, and its
#   activations, which sharding does not shrink: activation checkpointing
#   (``checkpoint_wrapper`` on each block, before ``fully_shard``) keeps only
#   each block's input and computes the rest again in the backward.
# * Mixed precision: ``MixedPrecisionPolicy`` with bfloat16 parameters,
#   ``float32`` gradient reduction, and ``output_dtype=torch.float32`` on the
#   root group only.
# * Accumulate with a reduce-scatter after every micro-batch (the default),
#   which keeps gradients sharded, or with
#   ``model.set_requires_gradient_sync(False)`` on all micro-batches but the
#   last, which saves those reduce-scatters and holds whole gradients until
#   then; clip with ``clip_grad_norm_`` as usual while every gradient is on
#   one mesh.
# * Checkpoint the whole training state with DCP: model and optimizer
#   (``get_state_dict``), schedule and steps, which DCP writes once, and each
#   process's random states (CPU and GPU) under a key of its own. It resumes
#   with any number of processes, from a folder they can all reach (the
#   random states only with as many); a full state dict on rank 0 is for use
#   without FSDP2.
# * :ref:`The next tutorial <fsdp2-at-scale-tutorial>` measures the choices
#   of resharding and prefetching, starts from values that no process holds
#   whole, compiles each block and shards with HSDP.
