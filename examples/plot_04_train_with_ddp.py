"""
.. _ddp-training:

Train a real model with ``DistributedDataParallel``
===================================================

The :ref:`DDP tutorial <ddp-tutorial>` showed how DDP shares out the
samples, with a model that has no labels to learn. This page trains a small
classifier on a labelled task until it is good at it, and adds what a real
training script needs around DDP: a held-out accuracy counted over every
process, checkpoints written by one process and a run that resumes from one,
gradient accumulation, bf16 mixed precision, logging from one process, a seed
per process, and the learning rate when the global batch grows.

Start it the way you would start your own script, with one process per GPU:

.. code-block:: bash

   torchrun --nproc-per-node=2 plot_04_train_with_ddp.py

Each process trains on a GPU of its own, with the ``nccl`` backend, when the
machine has at least one GPU per process; otherwise all of them train on the
CPU, with the ``gloo`` backend, and say so. The outputs below come from the
same training run with 1, 2, 3 and 8 processes, by the same rule, on the
machine that built this site unless the line above a result says it was
recorded on another; that line says where each result ran.
The page is written for PyTorch 2.13; the first output shows the version
that ran it.
"""

# %%
# Imports and settings
# --------------------
#
# ``GLOBAL_BATCH`` is the number of samples behind each optimizer step, over
# all processes together; each process loads ``GLOBAL_BATCH // WORLD_SIZE`` of
# them. Keeping it fixed is what lets runs with different numbers of
# processes compute the same thing, for the numbers that divide 240, as 1, 2,
# 3 and 8 do. With 7 processes, each would load 34, 238 in all.

import contextlib
import gc
import io
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch._dynamo  # before any process group exists: see the DDP tutorial
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, Subset, TensorDataset

if __name__ == "__main__":  # not again in each process the page starts
    print("PyTorch", torch.__version__)

SEED = 0
GLOBAL_BATCH = 240
EPOCHS = 4
LEARNING_RATE = 0.02

# %%
# A task that can be learned
# --------------------------
#
# Three interleaved spirals in the plane: each point is labelled with the arm
# it lies on, so guessing gives one answer in three. No straight line
# separates the arms, so the model has to learn curved boundaries. The points
# are computed from fixed seeds, so every process builds the same 2,400
# training points and the same 500 held-out points, which are used only to
# measure accuracy.


def spirals(n, seed, arms=3, noise=0.25):
    """``n`` noisy points on ``arms`` interleaved spirals, labelled by arm."""
    gen = torch.Generator().manual_seed(seed)
    labels = torch.arange(n) % arms
    radius = 0.3 + 4 * torch.rand(n, generator=gen)
    angle = 1.6 * radius + labels * (2 * math.pi / arms)
    points = torch.stack([radius * angle.cos(), radius * angle.sin()], dim=1)
    return TensorDataset(points + noise * torch.randn(n, 2, generator=gen), labels)


train_set = spirals(2400, seed=1)
test_set = spirals(500, seed=2)


def make_model():
    """A small network: 2 numbers in, a score for each of the 3 arms out."""
    return nn.Sequential(
        nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 3)
    )


# %%
# Every process, from start to end
# --------------------------------
#
# As in the DDP tutorial, the same function runs in every process:
# ``run_rank`` joins the process group, runs a job and leaves the group; the
# job frees its DDP model before it returns, so that the model is gone before
# the group is destroyed. Each process uses the GPU of its ``LOCAL_RANK`` and
# the ``nccl`` backend when the machine has a GPU for each of its
# ``LOCAL_WORLD_SIZE`` processes (NCCL cannot put two processes on one GPU),
# and otherwise the CPU and ``gloo``, as the DDP tutorial explains
# (``device_for_this_process``).


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
        dist.destroy_process_group()


def this_process():
    """This process's rank, the world size, its device and its ``log``."""
    rank = dist.get_rank()
    log = print if rank == 0 else lambda *args: None
    return rank, dist.get_world_size(), device_for_this_process(), log


# %%
# Two habits keep the log and the random numbers in order:
#
# * **Log from rank 0 only.** Every process computes the same loss and
#   accuracy (see below), so printing them from every process prints each
#   line ``WORLD_SIZE`` times, in any order. ``log`` is ``print`` on rank 0
#   and does nothing elsewhere.
# * **A seed per process.** ``torch.manual_seed(SEED + rank)`` gives every
#   process its own random numbers, which is what ``nn.Dropout`` and random
#   data augmentation need: with one seed for all, every process would draw the
#   same masks for different samples. It also means that each process builds
#   its model with different random weights. That does no harm: when DDP wraps
#   the model, it copies rank 0's parameters to every process, and the function
#   below checks that it did. What must be the same everywhere is the ``seed``
#   of the ``DistributedSampler`` (0 unless you pass one): it decides the
#   shuffled order that the processes share out.


def wrap(model, device):
    """Wrap ``model`` in DDP; say how many different models there were before and after."""
    world_size = dist.get_world_size()

    def distinct_models():
        total = sum(p.detach().double().sum().item() for p in model.parameters())
        everyone = [None] * world_size
        dist.all_gather_object(everyone, total)
        return len(set(everyone))

    before = distinct_models()
    ddp_model = DDP(model.to(device), device_ids=[device] if device.type == "cuda" else None)
    return ddp_model, f"models: {before} different before DDP, {distinct_models()} after"


# %%
# The training loop
# -----------------
#
# The loop is the one of a single process, with three differences from it:
# the model is wrapped, each process loads its share of every global batch
# through a ``DistributedSampler``, and ``sampler.set_epoch(epoch)`` at the
# start of every epoch gives each epoch its own shuffle. The loss that
# ``backward`` sees is the mean over this process's samples; DDP averages the
# gradients over the processes, so every process takes the same step, the
# step of the mean over the global batch.
#
# The loss of one process describes only its own samples. To log the loss of
# the whole epoch, each process adds up its losses and samples, and
# ``dist.all_reduce`` sums those two numbers over all processes, leaving the
# sum in every process. ``bf16`` turns on mixed precision, explained further
# down.


def train_epoch(model, loader, optimizer, device, bf16=False):
    """One epoch; return the mean loss over all processes' samples."""
    model.train()
    totals = torch.zeros(2, dtype=torch.float64, device=device)  # loss sum, samples
    for inputs, labels in loader:
        inputs, labels = inputs.to(device), labels.to(device)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
            loss = F.cross_entropy(model(inputs), labels)
        optimizer.zero_grad()
        loss.backward()  # DDP averages the gradients here
        optimizer.step()
        totals[0] += loss.detach().double() * len(labels)
        totals[1] += len(labels)
    dist.all_reduce(totals)  # the sums over all processes, everywhere
    return (totals[0] / totals[1]).item()


# %%
# Accuracy over all processes
# ---------------------------
#
# Each process counts the correct answers on its share of the held-out
# points, and one ``all_reduce`` sums the counts and the numbers of points.
# Evaluation uses ``model.module``, the model inside the DDP wrapper: the
# wrapper is for training, and the plain model runs no collective operation,
# so the processes need not run the same number of batches.
#
# Which points each process takes matters. A ``DistributedSampler`` gives
# every process the same number, ``ceil(500 / WORLD_SIZE)``, by repeating the
# first few points when 500 does not divide evenly: with 8 processes it
# hands out 504, and the repeated four are counted twice. For training that
# is harmless; for a measurement it is an error. ``evaluate`` therefore gives
# process ``rank`` the points ``rank``, ``rank + WORLD_SIZE``, ``rank + 2 *
# WORLD_SIZE``, and so on: every point exactly once, some processes one more
# than others. ``padded=True`` uses a ``DistributedSampler`` instead, to show
# the difference.


def evaluate(model, device, padded=False):
    """Return (accuracy, points counted) on the held-out set, over all processes."""
    rank, world_size = dist.get_rank(), dist.get_world_size()
    if padded:
        sampler = DistributedSampler(test_set, shuffle=False)
        points = DataLoader(test_set, batch_size=256, sampler=sampler)
    else:
        mine = Subset(test_set, range(rank, len(test_set), world_size))
        points = DataLoader(mine, batch_size=256)
    counts = torch.zeros(2, dtype=torch.int64, device=device)  # correct, points
    model.eval()
    with torch.no_grad():
        for inputs, labels in points:
            predicted = model(inputs.to(device)).argmax(dim=1)
            counts[0] += (predicted == labels.to(device)).sum()
            counts[1] += len(labels)
    dist.all_reduce(counts)
    return counts[0].item() / counts[1].item(), counts[1].item()


# %%
# Checkpoints
# -----------
#
# A checkpoint holds everything that the rest of the training depends on: the
# model's parameters, the optimizer's state (AdamW keeps two running averages
# per parameter), the number of epochs done, and the state of every process's
# random number generator. The sampler needs nothing more: ``set_epoch`` with
# the next epoch recreates its order. These checkpoints are written at the end
# of an epoch; one written in the middle would also have to record how many
# batches of the epoch were done, and skip them when resuming.
#
# * **Rank 0 writes it, alone.** Every process holds the same parameters, so
#   one copy is enough. It saves ``model.module.state_dict()``, the plain
#   model's parameters: the DDP wrapper's own ``state_dict`` would put
#   ``module.`` before every name, and a model without DDP could not load it as
#   it is. Each process's random state is different, so they are first
#   collected on rank 0 with ``dist.gather_object``. Writing to a temporary
#   file and renaming it means that a crash while writing leaves the previous
#   checkpoint intact.
# * **The others wait.** ``dist.barrier()`` holds every process until all
#   have reached it, so none goes on (or reads the file) before rank 0 has
#   written it.
# * **One file, with** ``torch.save``. With DDP every process holds the same
#   whole model and optimizer state, so one process can write all of it, and
#   the file loads anywhere: with or without DDP, with any number of
#   processes (only the random states are per process). Distributed
#   Checkpoint (``torch.distributed.checkpoint``, in :ref:`the FSDP2 tutorial
#   <fsdp2-tutorial>`), where every process writes its own part in parallel,
#   is for state that is sharded across the processes, or too large for one
#   process to write.
# * **Load onto the CPU**, with ``map_location="cpu"``. A tensor saved from
#   ``cuda:0`` is loaded back onto ``cuda:0`` by default, in every process:
#   all of them would put their copy on the first GPU. On the CPU, nothing
#   is lost: ``load_state_dict`` copies the values into the model's
#   parameters on whatever device they are, and the optimizer's
#   ``load_state_dict`` moves its state to its parameters' devices. The random
#   states must stay there: ``torch.set_rng_state`` and
#   ``torch.cuda.set_rng_state`` accept only CPU byte tensors, and loading
#   with ``map_location=device`` makes them GPU tensors, which both refuse.


def save_checkpoint(path, model, optimizer, epochs_done, device):
    """Rank 0 writes the checkpoint; every process returns once it is on disk."""
    rank = dist.get_rank()
    mine = {"cpu": torch.get_rng_state()}
    if device.type == "cuda":
        mine["cuda"] = torch.cuda.get_rng_state(device)  # dropout on a GPU draws from this one
    states = [None] * dist.get_world_size() if rank == 0 else None
    dist.gather_object(mine, states, dst=0)
    if rank == 0:
        checkpoint = {
            "model": model.module.state_dict(),
            "optimizer": optimizer.state_dict(),
            "epochs_done": epochs_done,
            "rng_states": states,
        }
        torch.save(checkpoint, f"{path}.partial")
        os.replace(f"{path}.partial", path)  # all or nothing
    dist.barrier()  # nobody reads it before it is complete


def load_checkpoint(path, model, optimizer, device, restore_optimizer=True):
    """Load ``path`` into the plain ``model`` and ``optimizer``; return the epochs done."""
    checkpoint = torch.load(path, map_location="cpu")
    model.load_state_dict(checkpoint["model"])  # into the parameters, on their device
    if restore_optimizer:
        optimizer.load_state_dict(checkpoint["optimizer"])
    states = checkpoint["rng_states"]
    if len(states) == dist.get_world_size():  # as many processes as saved it
        mine = states[dist.get_rank()]
        torch.set_rng_state(mine["cpu"])
        if device.type == "cuda" and "cuda" in mine:
            torch.cuda.set_rng_state(mine["cuda"], device)
    return checkpoint["epochs_done"]


# %%
# Training, from the start or from a checkpoint
# ---------------------------------------------
#
# ``train`` puts these together. It builds the model and the optimizer,
# loads a checkpoint into them if it was given one, and only then wraps the
# model, so that DDP copies the loaded parameters. It logs one line per
# epoch and writes a checkpoint after each. It returns what this page checks
# below: the losses, the accuracies and the checkpoints written.


def train(folder, resume_from=None, bf16=False, restore_optimizer=True):
    """Train for ``EPOCHS`` epochs with checkpoints in ``folder``; return the record."""
    rank, world_size, device, log = this_process()
    torch.manual_seed(SEED + rank)  # each process its own random numbers
    model = make_model().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE)
    done = 0
    if resume_from:
        done = load_checkpoint(resume_from, model, optimizer, device, restore_optimizer)
        log(f"resumed from {Path(resume_from).name}: {done} epochs done")
    model, wrapped = wrap(model, device)
    per_process = GLOBAL_BATCH // world_size
    sampler = DistributedSampler(train_set, seed=SEED)  # the same seed everywhere
    loader = DataLoader(train_set, batch_size=per_process, sampler=sampler)
    processes = f"{world_size} process{'es' if world_size > 1 else ''}"
    log(f"{processes}, {per_process} samples each per step, global batch"
        f" {per_process * world_size}, {len(loader)} steps per epoch; {wrapped}")
    record = {"losses": {}, "accuracies": {}, "checkpoints": []}
    for epoch in range(done, EPOCHS):
        sampler.set_epoch(epoch)  # a new shuffle every epoch
        loss = train_epoch(model, loader, optimizer, device, bf16)
        accuracy, counted = evaluate(model.module, device)
        path = os.path.join(folder, f"epoch-{epoch + 1}.pt")
        save_checkpoint(path, model, optimizer, epoch + 1, device)
        log(f"epoch {epoch + 1}: loss {loss:.6f}, held-out accuracy"
            f" {accuracy:.2%} of {counted}; saved {Path(path).name}")
        record["losses"][epoch + 1] = loss
        record["accuracies"][epoch + 1] = accuracy
        record["checkpoints"].append(path)
    accuracy, counted = evaluate(model.module, device, padded=True)
    log(f"through a DistributedSampler: {counted} points counted, accuracy {accuracy:.2%}")
    del model  # before the process group goes
    return record


# %%
# Gradient accumulation with ``no_sync``
# --------------------------------------
#
# When a batch does not fit in memory, split it into micro-batches, run
# ``backward`` on each, and step once: the gradients add up in ``.grad``.
# Divide each micro-batch's loss by their number, and the sum is the gradient
# of the mean over the whole batch. DDP would average the gradients over the
# processes after every ``backward``; inside ``with model.no_sync():`` it
# does not, and the gradients accumulate in each process. The first
# ``backward`` outside the block then averages everything accumulated so far,
# so only the last micro-batch runs outside it. The forward must run inside
# the block too, or DDP synchronises anyway.
#
# ``accumulation_check`` computes one gradient three ways, on the first global
# batch: in one ``backward``; from 5 micro-batches with ``no_sync``; and from
# 5 micro-batches without it. It counts the all-reduces DDP runs, with a
# communication hook that counts and calls ``allreduce_hook``, the Python
# version of DDP's all-reduce (registering any hook replaces DDP's built-in
# one, written in C++). It uses the same building blocks as ``train`` and
# returns what it found.


def accumulation_check(micro_batches=5):
    """Compare accumulated gradients with the whole batch's; count the all-reduces."""
    rank, world_size, device, log = this_process()
    torch.manual_seed(SEED)
    model, _ = wrap(make_model(), device)
    all_reduces = []

    def counting_allreduce(state, bucket):
        all_reduces.append(bucket.index())
        return allreduce_hook(state, bucket)

    model.register_comm_hook(None, counting_allreduce)
    sampler = DistributedSampler(train_set, seed=SEED)
    loader = DataLoader(train_set, batch_size=GLOBAL_BATCH // world_size, sampler=sampler)
    inputs, labels = next(iter(loader))
    inputs, labels = inputs.to(device), labels.to(device)

    def gradient(pieces, use_no_sync):
        model.zero_grad()
        all_reduces.clear()
        parts = list(zip(inputs.chunk(pieces), labels.chunk(pieces)))
        for i, (x, y) in enumerate(parts):
            last = i == len(parts) - 1
            with model.no_sync() if use_no_sync and not last else contextlib.nullcontext():
                (F.cross_entropy(model(x), y) / pieces).backward()
        return torch.cat([p.grad.flatten() for p in model.parameters()]), len(all_reduces)

    whole, whole_reduces = gradient(1, use_no_sync=False)
    accumulated, accumulated_reduces = gradient(micro_batches, use_no_sync=True)
    without, without_reduces = gradient(micro_batches, use_no_sync=False)
    difference = (accumulated - whole).abs().max().item()
    log(f"{micro_batches} micro-batches of {len(inputs) // micro_batches} per process:"
        f" largest difference from the whole batch's gradient {difference:.1e};"
        f" all-reduces: {whole_reduces} (whole batch), {accumulated_reduces} (with no_sync),"
        f" {without_reduces} (without)")
    result = {
        "difference": difference,
        "difference_without": (without - whole).abs().max().item(),
        "all_reduces": (whole_reduces, accumulated_reduces, without_reduces),
    }
    del model
    return result


# %%
# Starting it with ``torchrun``
# -----------------------------
#
# Run as ``torchrun --nproc-per-node=N plot_04_train_with_ddp.py``, every
# process runs the whole file, and this cell, seeing ``LOCAL_RANK``, trains
# with them all and stops there. It resumes from the newest checkpoint in its
# folder (``CHECKPOINT_DIR``, by default ``checkpoints``) if there is one: if
# the job is stopped, the same command continues from the last epoch it
# completed. Each process trains on its own GPU when the machine has one per
# process, and on the CPU with ``gloo`` otherwise; each says which when it
# starts, and rank 0 says why when it is the CPU.
#
# Under ``torchrun`` each process prints to the terminal itself, so the
# processes' lines arrive in the order they are printed and can interleave;
# this page's outputs were collected process by process and are shown in rank
# order. ``torchrun --tee 3`` starts each line with the number of the process
# that printed it (``[default0]:``) and also writes each process's output to
# files of its own under ``--log-dir``; ``--local-ranks-filter 0`` shows only
# the lines of the process whose ``LOCAL_RANK`` is 0.


def newest_checkpoint(folder):
    """The checkpoint of the most epochs in ``folder``, or None."""
    found = sorted(Path(folder).glob("epoch-*.pt"), key=lambda p: int(p.stem.split("-")[1]))
    return str(found[-1]) if found else None


if __name__ == "__main__" and "LOCAL_RANK" in os.environ:
    folder = os.environ.get("CHECKPOINT_DIR", "checkpoints")
    os.makedirs(folder, exist_ok=True)
    device = device_for_this_process()  # each process says where it runs, first
    print(f"rank {os.environ['RANK']}: {'nccl' if device.type == 'cuda' else 'gloo'} on {device}",
          flush=True)
    run_rank(train, folder, newest_checkpoint(folder))
    sys.exit()

# %%
# .. rst-class:: collapsed
#
# How this page starts its processes
# ----------------------------------
#
# The build runs this file with plain ``python``, and so can you: ``python
# plot_04_train_with_ddp.py`` runs everything on this page. For each result,
# the function below does what ``torchrun --nproc-per-node=N`` would do: it
# starts N processes with ``torch.multiprocessing.start_processes``, runs the
# rendezvous store itself, as ``torchrun``'s agent does, on a port that the
# operating system picks, and sets in each process the variables that
# ``init_process_group`` and this page read (``RANK``, ``LOCAL_RANK``,
# ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``, and
# ``TORCHELASTIC_USE_AGENT_STORE``, which makes ``init_process_group`` use
# that store instead of opening one in rank 0; ``torchrun`` sets more). As
# :ref:`the DDP tutorial's launcher <ddp-launcher>` explains, the store holds
# its port from the start, so no other job can take it, and the processes are
# copies of a fork server that has imported ``torch`` and has never used CUDA
# or run a backward pass (in a notebook, copies of the notebook's own process
# on a machine without GPUs; on a machine with GPUs, ``launch`` refuses to
# start them from a notebook), and each limits ``torch`` to one thread with
# ``torch.set_num_threads(1)``. Each process's printed lines are
# sent back to this one and shown after the job, tagged with the rank, under a
# line that says where the processes ran. This section is the only part of the
# page that exists for the build: your own scripts need none of it.


def start_method():
    """How ``launch`` starts processes here: from a fork server, spawned, or as copies of this one."""
    methods = mp.get_all_start_methods()
    if getattr(sys.modules["__main__"], "__file__", None):  # a script: they can import it
        return "forkserver" if "forkserver" in methods else "spawn"
    if "fork" not in methods:
        raise RuntimeError("on this system the processes must import the script, and a"
                           " notebook has none: run this tutorial as a script"
                           " (python plot_04_train_with_ddp.py) or with torchrun")
    if torch.cuda.device_count() > 0:  # NVML: asking starts no CUDA
        raise RuntimeError("this machine has GPUs, and a copy of this notebook's process could"
                           " use none of them once the notebook has called"
                           " torch.cuda.is_available(), nor run a backward pass once the"
                           " notebook has run one: run this tutorial as a script"
                           " (python plot_04_train_with_ddp.py) or with torchrun")
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
# Each tab shows one complete training with that many processes: the global
# batch is 240 everywhere, split into 240, 120, 80 or 30 samples per
# process, 10 steps per epoch. The first line shows that DDP made the
# processes' models the same; then, for each epoch, the loss over all
# processes and the held-out accuracy, and last, the accuracy counted
# through a ``DistributedSampler``. Only rank 0 prints. The last line comes
# from ``accumulation_check``.

if __name__ == "__main__":
    scratch = tempfile.TemporaryDirectory(prefix="ddp-training-")  # removed at exit
    folder = scratch.name  # the checkpoints of this page
runs, accumulation = {}, {}


def train_and_check(folder):
    """The job of each tab: ``train``, then ``accumulation_check``."""
    return train(folder), accumulation_check()


def run_with(world_size):
    """Train with ``world_size`` processes and check accumulation; show the lines."""
    checkpoints = os.path.join(folder, f"{world_size}-processes")
    os.makedirs(checkpoints)
    values = show(world_size, launch(world_size, train_and_check, checkpoints))
    runs[world_size], accumulation[world_size] = values[0]


# %%
# 1 process
# ^^^^^^^^^
#
# One process takes the whole global batch of 240 at every step.

if __name__ == "__main__":
    run_with(1)

# %%
# 2 processes
# ^^^^^^^^^^^
#
# 120 samples per process and step. 500 held-out points divide evenly by 2, so
# the sampler repeats none.

if __name__ == "__main__":
    run_with(2)

# %%
# 3 processes
# ^^^^^^^^^^^
#
# 80 samples per process and step. ``ceil(500 / 3) = 167`` held-out points
# per process through the sampler: 501, one counted twice.

if __name__ == "__main__":
    run_with(3)

# %%
# 8 processes
# ^^^^^^^^^^^
#
# 30 samples per process and step; ``ceil(500 / 8) = 63`` held-out points per
# process through the sampler, 504 in all.

if __name__ == "__main__":
    run_with(8)

# %%
# What agrees, and what does not
# ------------------------------
#
# With the same global batches, DDP computes the same training whatever the
# number of processes: the union of the processes' shares of a step is the
# same 240 samples, and the average of their gradients is the gradient of the
# mean over those 240. The table checks it on the last epoch's checkpoints,
# which rank 0 wrote in each run: the losses and accuracies are the same, and
# the parameters differ from one process's only by rounding, because the
# processes add up their gradients in a different order. What does differ is
# the count through the sampler: its repeated points.


def parameters(path):
    """The parameters in a checkpoint, as one vector."""
    state = torch.load(path, map_location="cpu")["model"]
    return torch.cat([tensor.flatten() for tensor in state.values()])


if __name__ == "__main__":
    last = {n: run["checkpoints"][-1] for n, run in runs.items()}
    print(f"{'processes':<40}" + "".join(f"{n:>10}" for n in runs))
    one = parameters(last[1])
    rows = {
        f"loss, epoch {EPOCHS}": [f"{run['losses'][EPOCHS]:.6f}" for run in runs.values()],
        f"held-out accuracy, epoch {EPOCHS}": [
            f"{run['accuracies'][EPOCHS]:.2%}" for run in runs.values()
        ],
        "largest parameter difference from 1": [
            f"{(parameters(path) - one).abs().max().item():.1e}" for path in last.values()
        ],
        "accumulation vs whole batch": [f"{a['difference']:.1e}" for a in accumulation.values()],
    }
    for name, cells in rows.items():
        print(f"{name:<40}" + "".join(f"{cell:>10}" for cell in cells))

# %%
# What the model learned
# ----------------------
#
# The last checkpoint of the run with one process, loaded into a model without
# DDP, colours the plane by the arm it predicts; the dots are the held-out
# points, in the colour of their true arm. ``model.module.state_dict()`` is
# what makes this work: the checkpoint's names are the plain model's.

try:
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
    print("matplotlib is not installed, so the figure is skipped.")

if __name__ == "__main__" and plt is not None:
    model = make_model()
    model.load_state_dict(torch.load(last[1], map_location="cpu")["model"])
    grid = torch.linspace(-5, 5, 201)
    xs, ys = torch.meshgrid(grid, grid, indexing="xy")
    with torch.no_grad():
        regions = model(torch.stack([xs.flatten(), ys.flatten()], dim=1)).argmax(dim=1)
    points, labels = test_set.tensors
    fig, ax = plt.subplots(figsize=(4.8, 4.8), layout="constrained")
    colours = plt.get_cmap("tab10").colors[:3]
    ax.contourf(xs, ys, regions.reshape(xs.shape), levels=[-0.5, 0.5, 1.5, 2.5],
                colors=colours, alpha=0.25)
    ax.scatter(points[:, 0], points[:, 1], c=[colours[label] for label in labels], s=6)
    ax.set_aspect("equal")
    ax.set_title("Predicted arm (background)\nand true arm (dots)")
    plt.show()

# %%
# Resuming from a checkpoint
# --------------------------
#
# A new job of 2 processes starts from the checkpoint that the 2-process run
# wrote after epoch 2, as if that run had been stopped there, and trains
# epochs 3 and 4. It then does the same again without loading the
# optimizer's state, which is what a checkpoint of the model alone would
# give.


def resume_twice(checkpoint, folder):
    """Resume from ``checkpoint`` with the optimizer's state, then without it."""
    with_state = train(os.path.join(folder, "with"), resume_from=checkpoint)
    without = train(os.path.join(folder, "without"), checkpoint, restore_optimizer=False)
    return with_state, without


if __name__ == "__main__":
    resumed = os.path.join(folder, "resumed")
    for name in ("with", "without"):
        os.makedirs(os.path.join(resumed, name))
    stopped = runs[2]["checkpoints"][1]  # after epoch 2
    with_state, without = show(2, launch(2, resume_twice, stopped, resumed))[0]
    first = runs[2]
    same = all(with_state["losses"][e] == first["losses"][e] for e in with_state["losses"])
    after = [parameters(run["checkpoints"][-1]) for run in (with_state, first)]
    print(f"with the optimizer's state: losses of epochs 3 and 4 equal to the uninterrupted"
          f" run's: {same}; parameters after epoch 4 identical: {torch.equal(*after)}")
    print(f"without it: epoch 3 loss {without['losses'][3]:.6f}"
          f" instead of {first['losses'][3]:.6f}")

# %%
# Everything carried over: the same parameters, the same AdamW averages, the
# same epoch, hence the same shuffle, and each process's random state (this
# model draws no random numbers while training, but one with ``nn.Dropout``
# would). On the CPU the resumed run repeats the uninterrupted one bit for
# bit, which the line above checks (the header above it says where the
# processes ran). On GPUs that is guaranteed only when both runs use
# deterministic algorithms (``torch.use_deterministic_algorithms(True)``, and
# ``CUBLAS_WORKSPACE_CONFIG=:4096:8`` for cuBLAS); otherwise the two may
# differ by rounding, and the line then says ``False``. Without the
# optimizer's state, AdamW starts its averages again from zero, its first
# steps are too large, and the loss jumps.
#
# Started with ``torchrun``, the script resumes this way by itself, from its
# newest checkpoint, and ``torchrun --max-restarts=3`` restarts it for you:
# when a process fails, ``torchrun`` stops the others and starts them all
# again, up to 3 times. With PyTorch 2.13, also set
# ``TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1``:
#
# .. code-block:: bash
#
#    export TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1
#    torchrun --nproc-per-node=2 --max-restarts=3 plot_04_train_with_ddp.py
#
# Without it, the restarted processes meet in the store that ``torchrun``
# keeps from the first start, find there the addresses of the processes
# they replace, and fail to connect to them: in our runs with ``gloo``, none
# of 3 jobs whose processes failed twice finished. With it, each start gets a
# store of its own, and all 3 finished, with the losses of an uninterrupted
# run. PyTorch's issue 135712 reports the same failure with ``nccl``.
#
# Mixed precision: bf16 autocast
# ------------------------------
#
# Inside ``with torch.autocast(device_type, dtype=torch.bfloat16):``, PyTorch
# runs the operations that gain from it, such as the matrix products of
# ``nn.Linear``, in bfloat16, and keeps those that need the range or the
# precision, such as ``cross_entropy``, in ``float32``. The parameters, their
# gradients and the optimizer's state stay in ``float32``; ``backward`` runs
# outside the block. ``train_epoch`` puts the forward and the loss inside it
# when ``bf16=True``. The job below first shows the types, then trains with 2
# processes. On GPUs with bfloat16 units (NVIDIA's since Ampere:
# ``torch.cuda.is_bf16_supported(including_emulation=False)`` says so) and on
# CPUs with bfloat16 instructions this saves time and memory; older GPUs
# emulate bfloat16, without the speed-up. Here it only shows that the result
# stays close.


def bf16_training(folder):
    """Show the dtypes under autocast, then train with ``bf16=True``."""
    _, _, device, log = this_process()
    layer = nn.Linear(2, 3).to(device)
    with torch.autocast(device.type, dtype=torch.bfloat16):
        scores = layer(train_set.tensors[0][:4].to(device))
        loss = F.cross_entropy(scores, train_set.tensors[1][:4].to(device))
    loss.backward()
    log(f"inside autocast: scores {scores.dtype}, loss {loss.dtype};"
        f" parameters {layer.weight.dtype}, gradients {layer.weight.grad.dtype}")
    return train(folder, bf16=True)


if __name__ == "__main__":
    os.makedirs(os.path.join(folder, "bf16"))
    bf16 = show(2, launch(2, bf16_training, os.path.join(folder, "bf16")))[0]
    print(f"epoch {EPOCHS}: loss {bf16['losses'][EPOCHS]:.6f} with bf16,"
          f" {runs[2]['losses'][EPOCHS]:.6f} in float32; held-out accuracy"
          f" {bf16['accuracies'][EPOCHS]:.2%} and {runs[2]['accuracies'][EPOCHS]:.2%}")

# %%
# With ``float16`` instead (``dtype=torch.float16``, on CUDA), you also need
# a ``torch.amp.GradScaler("cuda")``. float16 has only 5 exponent bits:
# numbers below about ``6e-8`` become zero, and many gradients are that
# small. The scaler multiplies the loss by a large factor before
# ``backward`` (65536 to begin with), so that the gradients stay
# representable, divides them by it again before the optimizer's step, and
# skips any step whose gradients contain an infinity or a NaN, lowering the
# factor. Its use is three lines: ``scaler.scale(loss).backward()``,
# ``scaler.step(optimizer)``, ``scaler.update()``. bfloat16 has the 8
# exponent bits of ``float32``, so the same range, and needs no scaler.
#
# The learning rate when the global batch grows
# ---------------------------------------------
#
# This page keeps the global batch at 240 and gives each process less as
# processes are added, so that the training stays the same. The other choice
# is to keep each process's batch and let the global batch grow with the
# processes. Then an epoch has fewer steps, and the learning rate that suited
# the small batch no longer does. A common starting point is to scale the
# learning rate with the global batch: in proportion for SGD, usually with a
# few epochs of gradual warm-up, and by the square root for ``Adam`` and
# ``AdamW``.
# These are rules of thumb to start tuning from, not guarantees.
#
# Had the 8-process run kept the 2-process run's 120 samples per process,
# its global batch would have been 960, 4 times as large. As the comparison
# above showed, the global batch alone decides what is computed, so this runs
# in a single process, without DDP, with batches of 960, for the same 4
# epochs, with the learning rate unchanged, times 2 (the square root of 4)
# and times 4, on a GPU if the machine has one, as the first line says. (Run
# with 8 processes, the numbers are the same, to rounding.)


def train_alone(batch_size, learning_rate):
    """Train ``EPOCHS`` epochs in this one process; return the last loss, accuracy, steps per epoch."""
    _, _, device, _ = this_process()
    _ = torch.manual_seed(SEED)  # rank 0's model
    model = make_model().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    sampler = DistributedSampler(train_set, num_replicas=1, rank=0, seed=SEED)
    loader = DataLoader(train_set, batch_size=batch_size, sampler=sampler)
    for epoch in range(EPOCHS):
        sampler.set_epoch(epoch)
        losses = []
        for inputs, labels in loader:
            loss = F.cross_entropy(model(inputs.to(device)), labels.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item() * len(labels))
    points, labels = (tensor.to(device) for tensor in test_set.tensors)
    with torch.no_grad():
        accuracy = (model(points).argmax(dim=1) == labels).double().mean().item()
    return sum(losses) / len(train_set), accuracy, len(loader)


def with_rates(batch_size, factors):
    """``train_alone`` with the learning rate times each of ``factors``."""
    return {factor: train_alone(batch_size, LEARNING_RATE * factor) for factor in factors}


if __name__ == "__main__":
    [larger] = show(1, launch(1, with_rates, 4 * GLOBAL_BATCH, (1, 2, 4)))
    for factor, (loss, accuracy, steps) in larger.items():
        print(f"global batch {4 * GLOBAL_BATCH}, {steps} steps per epoch, learning rate"
              f" {LEARNING_RATE * factor:.2f}: epoch {EPOCHS} loss {loss:.6f},"
              f" held-out accuracy {accuracy:.2%}")

# %%
# With the learning rate unchanged, 12 steps in all get far less done than
# the 40 steps of a global batch of 240. Here neither rule helps: without a
# warm-up, the larger rates are too large for these first steps, and the
# loss ends higher than with no change. The rules are where the tuning
# starts.
#
# The collective operations used here
# -----------------------------------
#
# Everything the processes exchanged on this page went through a few
# *collective* operations, which every process of the group must call, in the
# same order: when DDP wraps the model, an all-gather of every process's
# parameter shapes (it checks that they match) and a ``broadcast`` of rank
# 0's parameters and buffers; its all-reduce of the gradients; the
# ``all_reduce`` of the loss
# and of the counts; ``all_gather_object``, which checked the models, and
# ``gather_object``, which collected the random states; and ``barrier``. On
# their own, with 3 processes that each start with the number ``rank + 1``:


def collectives():
    """Show broadcast, all_reduce and all_gather on one number per process."""
    rank, world_size, device, _ = this_process()
    mine = torch.tensor([rank + 1.0], device=device)
    from_0 = mine.clone()
    dist.broadcast(from_0, src=0)  # everyone gets rank 0's
    total = mine.clone()
    dist.all_reduce(total)  # everyone gets the sum
    everyone = [torch.zeros_like(mine) for _ in range(world_size)]
    dist.all_gather(everyone, mine)  # everyone gets all of them, in rank order
    print(f"mine {mine.item():g}; broadcast from rank 0: {from_0.item():g};"
          f" all_reduce: {total.item():g}; all_gather: {[t.item() for t in everyone]}")


if __name__ == "__main__":
    show(3, launch(3, collectives))

# %%
# Every process prints here, on purpose: each one holds the same results.
# ``all_reduce`` sums by default; ``op=dist.ReduceOp.MAX`` and others choose
# another operation. A collective that one process skips leaves the others
# waiting until the group's timeout.
#
# What to remember
# ----------------
#
# * Keep the global batch fixed and divide it among the processes, and any
#   number of processes that divides it computes the same training, to
#   rounding; let it grow, and retune the learning rate.
# * ``DistributedSampler`` with the same ``seed`` everywhere, and
#   ``sampler.set_epoch(epoch)`` every epoch.
# * Seed each process with ``SEED + rank``; DDP makes the models the same.
#   Log from rank 0.
# * Reduce metrics with ``all_reduce`` of sums and counts, and evaluate every
#   point once: the sampler repeats points to even out the shares.
# * Checkpoint on rank 0 with ``model.module.state_dict()``, the optimizer,
#   the epoch and the random states, then ``dist.barrier()``; load with
#   ``map_location="cpu"``, before wrapping.
# * Accumulate gradients with forward and ``backward`` inside
#   ``model.no_sync()`` for all micro-batches but the last.
# * bf16 autocast around the forward and the loss; float16 needs a
#   ``GradScaler``.
#
# When the model itself is too large for one device, DDP's full copy in every
# process is the limit: :ref:`the FSDP2 tutorial <fsdp2-tutorial>` shards it.
