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

This page shards the classifier of the :ref:`previous tutorial
<ddp-training>`, shows what each process then holds, trains it, checks that
the result equals training in one process, and saves and loads it: with
Distributed Checkpoint (DCP), each process writing its own shards, and as one
ordinary state dict on rank 0. Run it with

.. code-block:: bash

   torchrun --nproc-per-node=2 plot_05_fsdp2.py

Each process works on a GPU of its own, with the ``nccl`` backend, when the
machine has at least one GPU per process; otherwise all of them work on the
CPU, with the ``gloo`` backend (FSDP2 runs there in PyTorch 2.13), and say
so. The outputs below come from the build of this site, which ran it with 2
and 4 processes by the same rule; the line above each result says where.
The page is written for PyTorch 2.13; the first output shows the version
that built it.
"""

# %%
# Imports and settings
# --------------------
#
# The settings are those of the previous tutorial; ``STEPS`` AdamW steps are
# enough to compare with one process.

import contextlib
import gc
import io
import math
import os
import socket
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
from torch.distributed.checkpoint.format_utils import dcp_to_torch_save
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_state_dict,
    set_state_dict,
)
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

if __name__ == "__main__":  # not again in each process the page starts
    print("PyTorch", torch.__version__)

SEED = 0
GLOBAL_BATCH = 240
STEPS = 3
LEARNING_RATE = 0.02

# %%
# The task and the model
# ----------------------
#
# The same three spirals as in the previous tutorial, and a wider version of
# its network, so that the shards are easy to see: 128 numbers between the
# layers instead of 64.


def spirals(n, seed, arms=3, noise=0.25):
    """``n`` noisy points on ``arms`` interleaved spirals, labelled by arm."""
    gen = torch.Generator().manual_seed(seed)
    labels = torch.arange(n) % arms
    radius = 0.3 + 4 * torch.rand(n, generator=gen)
    angle = 1.6 * radius + labels * (2 * math.pi / arms)
    points = torch.stack([radius * angle.cos(), radius * angle.sin()], dim=1)
    return TensorDataset(points + noise * torch.randn(n, 2, generator=gen), labels)


train_set = spirals(2400, seed=1)


def make_model():
    """2 numbers in, a score for each of the 3 arms out."""
    return nn.Sequential(
        nn.Linear(2, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 3)
    )


# %%
# Sharding the model
# ------------------
#
# ``fully_shard(module, mesh=mesh)`` replaces every parameter of ``module``
# with a ``DTensor``: a tensor that knows it is distributed over a *device
# mesh*, and how. The mesh here is ``init_device_mesh(device.type,
# (WORLD_SIZE,))``: all the processes in one row, on the device type the
# processes use. Pass it explicitly: without ``mesh=``, ``fully_shard`` makes
# a mesh on the machine's accelerator whatever the process group's backend,
# so on a machine with a GPU, processes meant for the CPU and ``gloo`` would
# move their parameters to CUDA anyway. Its placement is ``Shard(0)``: the
# parameter is cut along its first dimension into ``WORLD_SIZE`` pieces, as
# ``torch.chunk`` would cut it, and each process keeps only its own piece.
# Each call makes one group of parameters, which FSDP2 gathers and scatters
# together. Calling it on every layer first and on the whole model last
# ("bottom-up") makes one group per layer, which is what saves memory:
#
# * Just before a layer runs, FSDP2 *all-gathers* its group: every process
#   receives the other pieces and, for a moment, holds that layer whole.
#   After the layer's forward it frees them again
#   (``reshard_after_forward``), and gathers them once more for the backward.
#   Only the layer that runs is whole, and at most the next one, which FSDP2
#   starts gathering early so that the communication overlaps the
#   computation. With the whole model in one group, all of it would be whole.
# * After a layer's backward, FSDP2 *reduce-scatters* its gradients: they
#   are averaged over the processes, as DDP averages them, but each process
#   receives only the piece that matches its parameters.
# * The optimizer, built on the sharded parameters, updates each process's
#   pieces only, so its state is sharded too.
#
# The price is communication: every step gathers each layer twice. What it
# buys is memory: each process holds about ``1/WORLD_SIZE`` of everything
# that DDP holds whole.


def shard(model, device, mp_policy=MixedPrecisionPolicy()):
    """Apply FSDP2 to each ``nn.Linear`` of ``model``, then to ``model`` itself."""
    mesh = init_device_mesh(device.type, (dist.get_world_size(),))
    for layer in model:
        if isinstance(layer, nn.Linear):
            fully_shard(layer, mesh=mesh, mp_policy=mp_policy)
    fully_shard(model, mesh=mesh, mp_policy=mp_policy)
    return model


# %%
# Unlike DDP, FSDP2 copies no parameters from rank 0 when it shards: each
# process keeps its piece of the model *it* built. The processes must
# therefore build the same model, here with the same seed in every process:
# with a seed per process, the pieces would come from different models, a
# patchwork that no process built (the last job on this page shows it).
# Models too large to
# build in one process are built on the ``"meta"`` device, which allocates
# nothing, sharded, given memory for their pieces with ``model.to_empty()``,
# and then loaded from a checkpoint.
#
# What every process runs
# -----------------------
#
# ``run_rank`` is that of the previous tutorial (a GPU per process when the
# machine has enough, else the CPU), with one addition: it calls
# ``gc.collect()`` before it destroys the group. FSDP2's state and the
# modules it shards refer to each other, so ``del model`` alone leaves them,
# and the process group they hold, alive until Python's garbage collector
# next runs; ``gc.collect()`` frees them while the group still exists, as the
# DDP tutorial does with its model. ``train_steps`` is the previous
# tutorial's training loop, cut to ``STEPS`` steps: each process loads its
# share of each global batch through a ``DistributedSampler``, and the loss
# it logs is the mean over all processes.


def device_for_this_process():
    """``cuda:LOCAL_RANK`` if this machine has a GPU for each of its processes, else the CPU."""
    if torch.cuda.device_count() >= int(os.environ["LOCAL_WORLD_SIZE"]):
        return torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    return torch.device("cpu")


def run_rank(job, *args):
    """Be one process of the group: join it, run ``job``, leave it."""
    device = device_for_this_process()
    gpus = torch.cuda.device_count()
    if device.type == "cpu" and gpus and os.environ["RANK"] == "0":
        print(f"{os.environ['LOCAL_WORLD_SIZE']} processes on this machine and {gpus} GPU"
              f"{'s' if gpus > 1 else ''}: NCCL needs a GPU per process, so all of them"
              " use the CPU and gloo")  # fmt: skip
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
    log = print if rank == 0 else lambda *args: None  # fmt: skip
    return rank, dist.get_world_size(), device_for_this_process(), log


def train_steps(model, optimizer, device, log):
    """``STEPS`` steps on the first global batches; return the losses."""
    sampler = DistributedSampler(train_set, seed=SEED)
    per_process = GLOBAL_BATCH // dist.get_world_size()
    loader = DataLoader(train_set, batch_size=per_process, sampler=sampler)
    losses = []
    for step, (inputs, labels) in zip(range(STEPS), loader):
        loss = F.cross_entropy(model(inputs.to(device)), labels.to(device))
        optimizer.zero_grad()
        loss.backward()  # FSDP2 reduce-scatters the gradients here
        optimizer.step()
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        losses.append(mean.item() / dist.get_world_size())
    log("losses: " + ", ".join(f"{loss:.6f}" for loss in losses))
    return losses


# %%
# What each process holds
# -----------------------
#
# ``describe`` prints, for each parameter, its full shape, its placement and
# the shape of each process's piece, collected from all of them with
# ``all_gather_object``. A forward pre-hook, which runs after FSDP2's own,
# looks at the middle layer's weight while the layer runs.


def describe(model, log):
    """Log each parameter's full shape, placement and the pieces of all processes."""
    pieces = {name: tuple(p.to_local().shape) for name, p in model.named_parameters()}
    everyone = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, pieces)
    log(f"{'parameter':<10}{'shape':<12}{'placement':<16}pieces, rank 0 first")
    for name, p in model.named_parameters():
        shapes = [str(each[name]) for each in everyone]
        runs = []  # "3 × (1, 128), (0, 128)"
        for shape in shapes:
            if runs and runs[-1][1] == shape:
                runs[-1][0] += 1
            else:
                runs.append([1, shape])
        listed = ", ".join(shape if n == 1 else f"{n} × {shape}" for n, shape in runs)
        log(f"{name:<10}{str(tuple(p.shape)):<12}{p.placements[0]!r:<16}{listed}")
    held = [sum(math.prod(shape) for shape in each.values()) for each in everyone]
    log(f"numbers held: {' + '.join(map(str, held))} = {sum(held)}, one model")
    return everyone


def watch_middle_layer(model, log):
    """Log, once, what the middle layer's weight is while the layer runs."""

    def during(module, args):
        w = module.weight
        log(f"during 2's forward: 2.weight is a {type(w).__name__} of {tuple(w.shape)},"
            f" {w.dtype}")  # fmt: skip
        handle.remove()

    handle = model[2].register_forward_pre_hook(during)


# %%
# Checkpoints
# -----------
#
# There are two ways to save a sharded model, and a real training uses both:
#
# * **Distributed Checkpoint** (``torch.distributed.checkpoint``, DCP):
#   ``get_state_dict(model, optimizer)`` returns the model's and the
#   optimizer's state as sharded ``DTensor``\ s, and ``dcp.save`` has every
#   process write its own pieces, in parallel, to one folder: a file per
#   process and a ``.metadata`` file that says where each piece is. No
#   tensor is gathered, so this works for models that no process could hold
#   whole.
#   ``dcp.load`` reads into a sharded model and optimizer of any number of
#   processes, each reading only the pieces it needs; ``set_state_dict``
#   puts them in place. Use it for the checkpoints you resume from.
# * **A full state dict on rank 0**: ``get_model_state_dict`` with
#   ``StateDictOptions(full_state_dict=True, cpu_offload=True)`` gathers the
#   whole model, in ordinary tensors, on rank 0's CPU; the other processes get
#   an empty dict. Saved with ``torch.save``, it loads into the plain model,
#   without FSDP2, for evaluation or inference. The model must fit in one
#   process's memory.


def checkpoints(model, optimizer, device, folder, log):
    """Save with DCP, load it into a fresh model and optimizer; write the full state dict."""
    model_state, optimizer_state = get_state_dict(model, optimizer)
    dcp.save({"model": model_state, "optimizer": optimizer_state}, checkpoint_id=folder / "dcp")
    log("DCP wrote: " + ", ".join(sorted(p.name for p in (folder / "dcp").iterdir())))

    torch.manual_seed(SEED)
    fresh = shard(make_model().to(device), device)
    fresh_optimizer = torch.optim.AdamW(fresh.parameters(), lr=LEARNING_RATE)
    model_state, optimizer_state = get_state_dict(fresh, fresh_optimizer)
    loaded = {"model": model_state, "optimizer": optimizer_state}
    dcp.load(loaded, checkpoint_id=folder / "dcp")  # into these tensors, in place
    set_state_dict(fresh, fresh_optimizer, model_state_dict=loaded["model"],
                   optim_state_dict=loaded["optimizer"])  # fmt: skip
    same = True
    for a, b in zip(model.parameters(), fresh.parameters()):
        same &= torch.equal(a.to_local(), b.to_local())
        for name in ("exp_avg", "exp_avg_sq"):
            same &= torch.equal(optimizer.state[a][name].to_local(),
                                fresh_optimizer.state[b][name].to_local())  # fmt: skip
    same = torch.tensor(int(same), device=device)  # a collective's tensors: on this device
    dist.all_reduce(same, op=dist.ReduceOp.MIN)  # true only if true everywhere
    log(f"DCP loaded into a fresh sharded model and optimizer: equal to the saved ones"
        f" everywhere: {bool(same)}")  # fmt: skip

    options = StateDictOptions(full_state_dict=True, cpu_offload=True)
    full = get_model_state_dict(model, options=options)
    counts = [None] * dist.get_world_size()
    dist.all_gather_object(counts, len(full))
    if dist.get_rank() == 0:
        torch.save(full, folder / "model.pt")
    dist.barrier()
    others = max(counts[1:], default=0)
    log(f"full state dict: {counts[0]} tensors on rank 0, {others} on the others;"
        f" rank 0 saved model.pt")  # fmt: skip
    del fresh, fresh_optimizer


# %%
# The job of each result: shard, describe, train, save and load.


def fsdp_job(folder):
    """Shard the model, show what each process holds, train, save and load."""
    rank, world_size, device, log = this_process()
    torch.manual_seed(SEED)  # the same model in every process
    model = shard(make_model().to(device), device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE)
    pieces = describe(model, log)
    watch_middle_layer(model, log)
    losses = train_steps(model, optimizer, device, log)
    w = model[2].weight
    average = optimizer.state[w]["exp_avg"]
    log(f"after it: 2.weight is a {type(w).__name__} with a local piece of"
        f" {tuple(w.to_local().shape)}; AdamW's exp_avg for it:"
        f" {tuple(average.to_local().shape)}")  # fmt: skip
    checkpoints(model, optimizer, device, Path(folder), log)
    del model, optimizer
    return losses, pieces


# %%
# Starting it with ``torchrun``
# -----------------------------
#
# Run as ``torchrun --nproc-per-node=N plot_05_fsdp2.py``, every process runs
# the whole file, and this cell, seeing ``LOCAL_RANK``, runs the job with
# them all, writing its checkpoints to ``CHECKPOINT_DIR`` (by default
# ``fsdp2-checkpoint``), and stops there. Each process uses its own GPU when
# the machine has one per process, and the CPU with ``gloo`` otherwise; rank 0
# says so then.

if __name__ == "__main__" and "LOCAL_RANK" in os.environ:
    folder = os.environ.get("CHECKPOINT_DIR", "fsdp2-checkpoint")
    os.makedirs(folder, exist_ok=True)
    run_rank(fsdp_job, folder)
    sys.exit()

# %%
# .. rst-class:: collapsed
#
# How this page starts its processes
# ----------------------------------
#
# As in the previous tutorial, the build runs this file with plain
# ``python``, and the function below does for each result what ``torchrun
# --nproc-per-node=N`` would do, with public API only: a free port, N
# processes from ``torch.multiprocessing.start_processes`` (copies of a fork
# server that has never used CUDA or run a backward pass, as :ref:`the DDP
# tutorial's launcher <ddp-launcher>` explains; ``torch`` limited to one
# thread in each), the variables that ``init_process_group`` and this page
# read, and each process's printed lines sent back and shown tagged with its
# rank, under a line that says where the processes ran. Your own scripts
# need none of it.


def start_method():
    """How ``launch`` starts processes here: from a fork server, spawned, or as copies of this one."""
    methods = mp.get_all_start_methods()
    if getattr(sys.modules["__main__"], "__file__", None):  # a script: they can import it
        return "forkserver" if "forkserver" in methods else "spawn"
    if "fork" not in methods:
        raise RuntimeError("here the processes must import the script, and a notebook has"
                           " none: run this tutorial as a script (plot_05_fsdp2.py),"
                           " or with torchrun")  # fmt: skip
    if torch.cuda.is_initialized():
        raise RuntimeError("this notebook's process has initialised CUDA, and copies of it"
                           " could not use CUDA: restart the kernel, or run this tutorial"
                           " as a script (plot_05_fsdp2.py)")  # fmt: skip
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
                                        "matplotlib.pyplot"])  # fmt: skip
    with socket.socket() as probe:  # the operating system picks a free port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    results = context.SimpleQueue()
    processes = mp.start_processes(
        _as_rank, args=(world_size, port, results, job, args), nprocs=world_size,
        join=False, daemon=True, start_method=method,
    )  # fmt: skip
    reports, deadline = {}, time.monotonic() + timeout
    try:
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
    while not results.empty():
        rank, *report = results.get()
        reports[rank] = tuple(report)
    return [reports[rank] for rank in range(world_size)]


def _as_rank(rank, world_size, port, results, job, args):
    """Become rank ``rank`` as ``torchrun`` would make it, run the job, say on which GPU."""
    gc.freeze()  # what this copy started with, its garbage collector skips
    torch.set_num_threads(1)
    os.environ.update(
        RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size),
        LOCAL_WORLD_SIZE=str(world_size), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
    )  # fmt: skip
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
    if silent:
        print(f"(ranks {silent[0]} to {silent[-1]} printed nothing)" if len(silent) > 1
              else f"(rank {silent[0]} printed nothing)")  # fmt: skip
    return [value for _, value, _ in reports]


# %%
# .. rst-class:: gpu-tabs
#
# Results
# -------
#
# Each tab runs ``fsdp_job`` with that many processes: the table of pieces,
# the middle layer's weight during its forward, the losses of the 3 steps,
# the layer and its AdamW state afterwards, and the checkpoints. Only rank 0
# prints.

if __name__ == "__main__":
    scratch = tempfile.TemporaryDirectory(prefix="fsdp2-")  # removed at exit
    folder = scratch.name  # the checkpoints of this page
losses, pieces = {}, {}


def run_with(world_size):
    """Run ``fsdp_job`` with ``world_size`` processes and show what rank 0 logged."""
    checkpoint = os.path.join(folder, f"{world_size}-processes")
    os.makedirs(checkpoint)
    reports = launch(world_size, fsdp_job, checkpoint)
    losses[world_size], pieces[world_size] = show(world_size, reports)[0]


# %%
# 2 processes
# ^^^^^^^^^^^
#
# 128 rows cut in two: 64 each. The last layer's 3 rows cannot be cut evenly:
# rank 0 keeps 2, rank 1 keeps 1.

if __name__ == "__main__":
    run_with(2)

# %%
# 4 processes
# ^^^^^^^^^^^
#
# 32 rows each; the last layer has only 3 rows, so rank 3 holds an empty
# piece of it. FSDP2 still includes it in every gather and scatter.

if __name__ == "__main__":
    run_with(4)

# %%
# Which process keeps which rows
# ------------------------------
#
# The rows of the middle layer's weight and of the last layer's, coloured by
# the process that keeps them, for each number of processes above.

try:
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
    print("matplotlib is not installed, so the figure is skipped.")

if __name__ == "__main__" and plt is not None:
    fig, axes = plt.subplots(1, 2, figsize=(6.4, 2.2), layout="constrained")
    colours = plt.get_cmap("tab10").colors
    for ax, name in zip(axes, ("2.weight", "4.weight")):
        for row, (world_size, each) in enumerate(pieces.items()):
            start = 0
            for rank, rows in enumerate(shape[name][0] for shape in each):
                ax.barh(row, rows, left=start, color=colours[rank], edgecolor="white")
                if rows:
                    ax.text(start + rows / 2, row, f"rank {rank}" if rows > 9 else str(rank),
                            ha="center", va="center", fontsize=7)  # fmt: skip
                start += rows
        ax.set_yticks(range(len(pieces)), [f"{n} processes" for n in pieces])
        ax.invert_yaxis()
        ax.set_xlabel("rows")
        ax.set_title(f"{name}, {start} rows")
    plt.show()

# %%
# The same result as one process
# ------------------------------
#
# FSDP2 changes where the numbers are kept, not what is computed. One
# process without FSDP2 trains the same model on the same global batches and
# saves its parameters. Its losses and its parameters after 3 AdamW steps are
# compared with each run above: with the losses that run logged, with its
# full state dict (``model.pt``, written by rank 0) and with its DCP
# checkpoint, which ``dcp_to_torch_save`` converts into one ordinary file: it
# reads, in one process, a checkpoint written by any number of processes.


def train_alone(path):
    """The same model and steps in one process, without FSDP2; save it to ``path``."""
    _, _, device, _ = this_process()
    _ = torch.manual_seed(SEED)
    model = make_model().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE)
    sampler = DistributedSampler(train_set, num_replicas=1, rank=0, seed=SEED)
    loader = DataLoader(train_set, batch_size=GLOBAL_BATCH, sampler=sampler)
    found = []
    for _, (inputs, labels) in zip(range(STEPS), loader):
        loss = F.cross_entropy(model(inputs.to(device)), labels.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        found.append(loss.item())
    torch.save(model.state_dict(), path)
    return found


def largest_difference(state, reference):
    """The largest difference between two state dicts' tensors."""
    return max((state[name] - tensor).abs().max().item() for name, tensor in reference.items())


if __name__ == "__main__":
    [(_, alone, _)] = launch(1, train_alone, Path(folder, "alone.pt"))
    reference = torch.load(Path(folder, "alone.pt"), map_location="cpu")
    print("one process: losses " + ", ".join(f"{loss:.6f}" for loss in alone))
    for world_size, found in losses.items():
        checkpoint = Path(folder, f"{world_size}-processes")
        full = torch.load(checkpoint / "model.pt", map_location="cpu")
        dcp_to_torch_save(checkpoint / "dcp", checkpoint / "from-dcp.pt")
        from_dcp = torch.load(checkpoint / "from-dcp.pt", map_location="cpu")["model"]
        loss_difference = max(abs(a - b) for a, b in zip(found, alone))
        print(f"{world_size} processes: largest difference in the losses {loss_difference:.1e},"
              f" in the parameters {largest_difference(full, reference):.1e} (model.pt),"
              f" {largest_difference(from_dcp, reference):.1e} (DCP)")  # fmt: skip

# %%
# The differences are rounding: the processes add up the gradients in
# another order than one process does.
#
# Mixed precision
# ---------------
#
# FSDP2 does mixed precision itself, per layer rather than per operation as
# autocast does: with ``MixedPrecisionPolicy(param_dtype=torch.bfloat16,
# reduce_dtype=torch.float32)``, each layer's pieces are gathered as bfloat16
# and the layer computes in bfloat16, while the gradients are reduced in
# ``float32``. The sharded parameters that the optimizer updates stay in
# ``float32``, so no extra copy is needed. The job below runs with this
# policy on 2 processes. It then shows what happens when each process
# builds its model with its own seed, as the previous tutorial did: the full
# weight that FSDP2 reassembles is part rank 0's model, part rank 1's.


def mixed_precision_and_seeds():
    """Train with a bf16 policy; then shard models built with a seed per process."""
    rank, _, device, log = this_process()
    torch.manual_seed(SEED)
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    model = shard(make_model().to(device), device, policy)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE)
    watch_middle_layer(model, log)
    scores = model(train_set.tensors[0][:4].to(device))
    log(f"scores: {scores.dtype}; sharded parameters: {model[2].weight.dtype}")
    losses = train_steps(model, optimizer, device, log)
    del model, optimizer

    torch.manual_seed(SEED + rank)  # a different model in every process
    sharded = shard(make_model().to(device), device)
    mixed = sharded[4].weight.full_tensor().cpu()  # all-gathers the pieces
    del sharded
    origins = []
    for seed in range(dist.get_world_size()):
        torch.manual_seed(seed)
        whole = make_model()[4].weight
        origins.append([row for row in range(len(whole)) if torch.equal(mixed[row], whole[row])])
    log("seed per process: rows of the full 4.weight from "
        + "; ".join(f"rank {r}'s model: {rows}" for r, rows in enumerate(origins)))  # fmt: skip
    del mixed
    return losses


if __name__ == "__main__":
    mixed = show(2, launch(2, mixed_precision_and_seeds))[0]
    print(f"bf16 policy: largest difference from float32 in the losses"
          f" {max(abs(a - b) for a, b in zip(mixed, losses[2])):.1e}")  # fmt: skip

# %%
# With the bfloat16 policy the losses stay within about a hundredth of the
# ``float32`` ones: the scores, and so the losses, are bfloat16 numbers,
# which keep only 2 to 3 significant digits.
#
# What to remember
# ----------------
#
# * ``fully_shard`` each layer (or each block of layers), then the whole
#   model. Parameters become ``DTensor``\ s with ``Shard(0)``; each process
#   keeps ``1/WORLD_SIZE`` of the parameters, gradients and optimizer state.
# * Build the same model in every process: FSDP2 copies nothing from rank 0.
# * The training loop is unchanged, with a ``DistributedSampler``; the
#   result is that of one process, to rounding.
# * Resume from DCP (``get_state_dict``, ``dcp.save``, ``dcp.load``,
#   ``set_state_dict``); export a full state dict on rank 0 for use without
#   FSDP2.
# * Mixed precision: a ``MixedPrecisionPolicy`` with bfloat16 parameters and
#   ``float32`` gradient reduction.
