"""Training in several processes at once (every GPU of a machine, or several machines), as
torchrun starts them: the process group, each rank's shard of a global batch, and the few values
the ranks must agree on.

torchrun sets RANK, WORLD_SIZE and LOCAL_RANK in each process it starts; without them (or with
WORLD_SIZE 1) there is one process and nothing here talks to another. Each rank builds the same
plan of global batches (the same data, seed and epoch) and trains on its shard of each one, so
no data is sent between ranks; DistributedDataParallel averages the gradients. Only rank 0 writes
files and the log. GPUs talk over NCCL, CPU ranks (the test) over gloo; the per-step clock and
the tokenizer travel over a gloo group either way, as CPU values that never wait for a GPU.

Nothing here imports torch at module level: the trainer's data code is tested without it.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import timedelta

# One process per machine tokenizes the data (rank 0 trains the tokenizer first) while the others wait: minutes on
# a big corpus, longer than the default timeout of some backends.
WAIT = timedelta(minutes=60)


@dataclass
class World:
    rank: int = 0
    size: int = 1
    local_rank: int = 0
    control: object = None  # the gloo group of CPU values (the default group where that is gloo already)

    @property
    def on(self) -> bool:
        return self.size > 1

    @property
    def writer(self) -> bool:
        return self.rank == 0


def from_env() -> World:
    """This process's place among those torchrun started (one process of its own without torchrun)."""
    size = int(os.environ.get("WORLD_SIZE", "1"))
    if size <= 1:
        return World()
    return World(rank=int(os.environ["RANK"]), size=size, local_rank=int(os.environ.get("LOCAL_RANK", "0")))


def start(world: World, device: str) -> None:
    """Joins the process group (torchrun's rendezvous: MASTER_ADDR, MASTER_PORT in the environment)."""
    import torch
    import torch.distributed as dist
    if device == "cuda":
        torch.cuda.set_device(world.local_rank)  # "cuda" then means this rank's GPU throughout the trainer
        dist.init_process_group("nccl", timeout=WAIT)
        world.control = dist.new_group(backend="gloo", timeout=WAIT)
    else:
        dist.init_process_group("gloo", timeout=WAIT)


def finish(world: World) -> None:
    if world.on:
        import torch.distributed as dist
        if dist.is_initialized():
            dist.destroy_process_group()


def barrier(world: World) -> None:
    if world.on:
        import torch.distributed as dist
        dist.barrier(group=world.control)


def from_rank0(world: World, value):
    """Rank 0's value (a name, a file's bytes), on every rank."""
    import torch.distributed as dist
    box = [value]
    dist.broadcast_object_list(box, src=0, group=world.control)
    return box[0]


def agree_clock(world: World, elapsed: float, stop: bool) -> tuple[float, bool]:
    """Rank 0's training time and stop flag, on every rank: the learning rate of a time budget and the
    decision to end are then the same everywhere (a rank that left the loop alone would leave the others
    waiting for its gradients)."""
    import torch
    import torch.distributed as dist
    t = torch.tensor([elapsed, 1.0 if stop else 0.0], dtype=torch.float64)
    dist.broadcast(t, src=0, group=world.control)
    return float(t[0]), bool(t[1])


def all_sum(world: World, values, device: str) -> list[float]:
    """The sums over every rank of a few numbers (or of a tensor on `device`, summed in place)."""
    import torch
    import torch.distributed as dist
    t = values if isinstance(values, torch.Tensor) else torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(t)
    return t.tolist() if t.dim() else [float(t)]


def shard(rows: list[list[tuple[int, int]]], world: World, attention: str) -> list[list[tuple[int, int]]]:
    """This rank's part of a global batch's rows of (doc, length): every document in exactly one rank.
    Dense rows are all as long as the batch's longest document, so they are dealt out in turn; a flat
    stream (segments) is cut by document, longest first to the rank with the fewest tokens so far, so
    that no rank waits long for the others. Possibly empty where a batch has fewer documents than ranks."""
    if attention == "dense":
        return rows[world.rank::world.size]
    docs = sorted((d for row in rows for d in row), key=lambda d: -d[1])  # stable: ties keep the plan's order
    load = [0] * world.size
    mine = []
    for d in docs:
        r = min(range(world.size), key=lambda k: (load[k], k))
        load[r] += d[1]
        if r == world.rank:
            mine.append(d)
    return [mine] if mine else []


def wrap(model, world: World):
    """The model under DistributedDataParallel, its forward the loss (DDP syncs gradients only for what
    runs through its forward). Inputs stay where the trainer put them (no device_ids: a Segments
    argument is no tensor to move)."""
    import torch
    from torch.nn.parallel import DistributedDataParallel

    class Loss(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, tokens, pos, doc, at, targets):
            return self.m.loss_at(tokens, pos, doc, at, targets)

    return DistributedDataParallel(Loss(model), device_ids=None, broadcast_buffers=False)
