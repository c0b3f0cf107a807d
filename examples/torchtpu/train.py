#!/usr/bin/env python3
"""train.py -- a small data-parallel PyTorch / TorchTPU job run as a Manta task.

Each process is one rank. It takes the torch.distributed env the scheduler
set (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE; one process alone when
WORLD_SIZE is absent or 1; in a host-centric TPU launch without RANK, the
rank is TPU_WORKER_ID among TPU_WORKER_HOSTNAMES), uses the TorchTPU device when the torch_tpu
package is importable (else says so and runs on the CPU with the same
slice env), reads its training data from the object store (--input ID) or
generates it, and fits a linear regression for a few steps, averaging the
gradients over all ranks with all-reduce (gloo). Every rank ends with the
same weights and prints one line

    rank R/W weights sha256=HEX object=ID

(HEX: the sha256 of the final float32 weights, [w..., b]; ID: where this
rank put them in its node's object store, for as long as the rank's
process lives: a process's puts end with it). Rank 0 also reports them as
the task's result (manta.report_result) when it runs as a Manta command
task; that object outlives the process.

Data layout: a float32 tensor of shape (N, D + 1): D features, then the
target. Rank r trains on rows r, r + W, r + 2W, ...

Options: --input ID, --steps N (20), --lr X (0.1), --seed S (0),
--env-out DIR (write this process's whole environment as JSON to
DIR/env-rank<RANK>.json, or DIR/env-host<TPU_WORKER_ID>.json without
RANK). See README.md next to this file.
"""
import argparse
import datetime
import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def import_manta():
    try:
        import manta
    except ImportError:  # run from the source tree
        sys.path.insert(0, os.path.join(HERE, "..", "..", "sdk", "python"))
        import manta
    return manta


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--input", help="object id of the (N, D+1) float32 data")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--env-out", help="write the environment as JSON here")
    return p.parse_args()


def write_env(d):
    os.makedirs(d, exist_ok=True)
    if os.environ.get("RANK") is not None:
        name = "env-rank%s.json" % os.environ["RANK"]
    else:
        name = "env-host%s.json" % os.environ.get("TPU_WORKER_ID", "0")
    tmp = os.path.join(d, name + ".tmp")
    with open(tmp, "w") as f:
        json.dump(dict(os.environ), f, indent=1, sort_keys=True)
    os.replace(tmp, os.path.join(d, name))


def pick_device(torch, tag):
    """The TorchTPU device when torch_tpu imports and works, else CPU."""
    slice_env = " ".join("%s=%s" % (k, os.environ[k]) for k in (
        "TPU_ACCELERATOR_TYPE", "TPU_WORKER_ID", "TPU_VISIBLE_CHIPS")
        if k in os.environ)
    try:
        import torch_tpu  # noqa: F401  (registers the "tpu" device)
        dev = torch.device("tpu")
        torch.zeros(1).to(dev)
        print("%s device=tpu (TorchTPU) %s" % (tag, slice_env), flush=True)
        return dev
    except Exception as e:  # ImportError, or no usable chip
        why = ("torch_tpu is not importable" if isinstance(e, ImportError)
               else "TorchTPU failed: %s" % e)
        print("%s device=cpu: %s; running on CPU with the same slice env%s"
              % (tag, why, " (" + slice_env + ")" if slice_env else ""),
              flush=True)
        return torch.device("cpu")


def load_data(torch, manta, args, tag):
    """(data tensor, client or None). The client is needed to put the
    weights; without a cluster the job still runs."""
    client = None
    try:
        client = manta.connect()
    except Exception as e:
        if args.input:
            raise SystemExit("%s cannot reach the object store for --input: "
                             "%s" % (tag, e))
        print("%s no Manta cluster (%s); weights stay local" % (tag, e),
              flush=True)
    if args.input:
        obj = client.get(args.input, timeout=30)
        data = obj.torch()  # zero-copy view on the store
        if data.dtype != torch.float32 or data.dim() != 2 or \
                data.shape[1] < 2:
            raise SystemExit("%s --input %s must be an (N, D+1) float32 "
                             "tensor, not %s %s" % (tag, args.input,
                                                    data.dtype,
                                                    list(data.shape)))
        print("%s input %s: %s" % (tag, args.input, list(data.shape)),
              flush=True)
        return data, client
    g = torch.Generator().manual_seed(1234)
    x = torch.randn(256, 8, generator=g)
    y = x @ torch.arange(1.0, 9.0) + 0.5
    print("%s no --input: generated 256 x 8 data (seed 1234)" % tag,
          flush=True)
    return torch.cat([x, y[:, None]], dim=1), client


def train(torch, dist, data, rank, world, device, args):
    d = data.shape[1] - 1
    mine = data[rank::world].clone().to(device)  # copy out of the store
    x, y = mine[:, :d], mine[:, d:]
    torch.manual_seed(args.seed)
    model = torch.nn.Linear(d, 1).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    loss = None
    for _ in range(args.steps):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        if world > 1:
            for p in model.parameters():
                g = p.grad.detach().cpu()
                dist.all_reduce(g, op=dist.ReduceOp.SUM)
                p.grad.copy_((g / world).to(device))
        opt.step()
    w = torch.cat([model.weight.detach().flatten(),
                   model.bias.detach()]).cpu().contiguous()
    return w, float(loss)


def ranks(g):
    """(rank, world size) from RANK/WORLD_SIZE; else, in a host-centric
    TPU launch (one process per host, no RANK), from TPU_WORKER_ID and
    TPU_WORKER_HOSTNAMES, with MASTER_ADDR defaulting to the first host
    (MASTER_PORT must be set for more than one host); else (0, 1)."""
    if g.rank is not None or g.world_size is not None:
        return g.rank or 0, g.world_size or 1
    hosts = g.tpu_worker_hostnames or []
    if g.tpu_worker_id is None or len(hosts) < 2:
        return 0, 1
    if g.master_port is None:
        print("host %d of %d: no MASTER_PORT, so no rendezvous; training "
              "alone" % (g.tpu_worker_id, len(hosts)), flush=True)
        return 0, 1
    os.environ.setdefault("MASTER_ADDR", hosts[0])
    return g.tpu_worker_id, len(hosts)


def main():
    args = parse_args()
    if args.env_out:
        write_env(args.env_out)
    import torch
    import torch.distributed as dist
    manta = import_manta()
    rank, world = ranks(manta.grant())
    tag = "rank %d/%d" % (rank, world)
    device = pick_device(torch, tag)
    data, client = load_data(torch, manta, args, tag)
    if world > 1:
        dist.init_process_group("gloo", init_method="env://", rank=rank,
                                world_size=world,
                                timeout=datetime.timedelta(seconds=60))
    w, loss = train(torch, dist, data, rank, world, device, args)
    digest = hashlib.sha256(w.numpy().tobytes()).hexdigest()
    where = "none"
    if client is not None:
        where = client.put(w).id
        if rank == 0 and os.environ.get("MANTA_RESULT_PATH"):
            client.report_result(w)
    print("%s weights sha256=%s object=%s loss=%.6f" % (tag, digest, where,
                                                          loss), flush=True)
    if world > 1:
        dist.barrier()
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
