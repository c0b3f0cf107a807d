"""_grant.py -- the accelerator grant of the current task, from its env.

The scheduler computes a task's accelerator environment once per grant
(docs/accelerators.md) and the worker sets it, with the task's ids
(MANTA_TASK_ID, MANTA_NODE_ID, ...), in the program's environment. grant()
reads it back; it needs no library and no connection. Variables that are
absent read as None (not as "no device"): CUDA_VISIBLE_DEVICES="" means
no GPU, an absent one means the process was not bound at all.
"""
import dataclasses
import os

_PREFIXES = ("TPU_", "TORCH_TPU_", "MEGASCALE_", "CLOUD_TPU_", "MANTA_")
_NAMES = ("CUDA_VISIBLE_DEVICES", "RANK", "WORLD_SIZE", "LOCAL_RANK",
          "MASTER_ADDR", "MASTER_PORT")


def _int(v):
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _list(v):
    if v is None:
        return None
    return [x for x in v.split(",") if x != ""]


@dataclasses.dataclass
class Grant:
    """What this task was given. env holds every variable read (all
    TPU_*, TORCH_TPU_*, MEGASCALE_*, CLOUD_TPU_*, MANTA_* and the torch
    distributed ones) exactly as set."""
    task_id: str = None
    attempt: int = None
    node_id: str = None
    head_address: str = None
    gpus: list = None              # CUDA_VISIBLE_DEVICES entries
    tpu_chips: list = None         # TPU_VISIBLE_CHIPS entries
    tpu_accelerator_type: str = None
    tpu_topology: str = None
    tpu_worker_id: int = None
    tpu_worker_hostnames: list = None
    rank: int = None
    world_size: int = None
    local_rank: int = None
    master_addr: str = None
    master_port: int = None
    env: dict = dataclasses.field(default_factory=dict)

    @property
    def distributed(self):
        """True when the scheduler made this process one rank of many."""
        return (self.world_size or 1) > 1


def grant(environ=None):
    """The current task's grant (from os.environ, or the mapping given)."""
    e = os.environ if environ is None else environ
    env = {k: v for k, v in e.items()
           if k.startswith(_PREFIXES) or k in _NAMES}
    return Grant(task_id=e.get("MANTA_TASK_ID"),
                 attempt=_int(e.get("MANTA_TASK_ATTEMPT")),
                 node_id=e.get("MANTA_NODE_ID"),
                 head_address=e.get("MANTA_HEAD_ADDRESS"),
                 gpus=_list(e.get("CUDA_VISIBLE_DEVICES")),
                 tpu_chips=_list(e.get("TPU_VISIBLE_CHIPS")),
                 tpu_accelerator_type=e.get("TPU_ACCELERATOR_TYPE"),
                 tpu_topology=e.get("TPU_TOPOLOGY"),
                 tpu_worker_id=_int(e.get("TPU_WORKER_ID")),
                 tpu_worker_hostnames=_list(e.get("TPU_WORKER_HOSTNAMES")),
                 rank=_int(e.get("RANK")),
                 world_size=_int(e.get("WORLD_SIZE")),
                 local_rank=_int(e.get("LOCAL_RANK")),
                 master_addr=e.get("MASTER_ADDR"),
                 master_port=_int(e.get("MASTER_PORT")),
                 env=env)
