#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""dask_microbenchmark.py -- `manta microbenchmark`'s suite for dask.distributed.

The peer half of the side-by-side comparison (bench/peers/compare.py runs
both). Every metric has the name, the unit and the timing of
bench/microbenchmark.c: a warm-up of S/4 seconds, then 3 trials of S
seconds (default 2, at least one op per trial), reported as the mean and
the population standard deviation of the trials' rates, as ray_perf's
timeit() does.

The cluster mirrors the one `manta microbenchmark` starts (a head and one
worker with 4 CPUs, 4 prestarted executor processes, one task each at a
time): a dask LocalCluster with processes, 4 workers of 1 thread each, on
127.0.0.1, no dashboard. As in any LocalCluster the scheduler runs in this
driver process (Manta's head is a process of its own). Clients use
direct_to_workers=True: data and actor calls go straight to the worker
(as Manta's client talks to its store, and Ray's caller to its actor)
rather than through the scheduler, which made actor calls 2.5-4x faster
here.

What one op is, against Manta's (docs in bench/RESULTS.md):
  tasks        client.submit(noop, pure=False) -- pure=False, or dask would
               run one task for all the identical calls; batches are 1,000
  *_sync       .result() on each before the next submit
  *_async      submit 1,000, distributed.wait() for all of them
  tasks_and_get_batch   submit 1,000 then client.gather() them all
  wait_1k_refs submit 1,000, then take them one at a time as they become
               ready with as_completed() (Ray: ray.wait(not_ready) 1,000
               times; Manta: mt_wait_tasks for 1 over those left)
  multi_client 4 client processes (Manta: 4 threads, each its own client),
               each submitting batches of 1,000 and waiting for them
  put_calls    client.scatter(8 bytes, hash=False) (Manta puts 8 bytes)
  get_calls    client.gather() of one scattered 8-byte object: a round trip
               to the worker holding it (Manta serves it from the client's
               cache of mapped objects)
  put_gigabytes  client.scatter() of an 800,000,000-byte bytes object
  actor calls  an actor (client.submit(Class, actor=True)), method noop();
               sync: .result() each; async: 1,000 calls, then .result() of
               each; n_n: one actor per worker (4) and the 4 client
               processes, each calling all actors in turn, 1,000 in flight
  placement_group_create/removal  n/a: dask has no placement groups

--quick (the smoke test's mode) and --workers N change the shape: their
figures are not comparable with Manta's.

Needs python3-distributed (deploy/install-deps.sh --bench). Without it
the suite says so and exits 77 (the "skipped" status of ctest's
SKIP_RETURN_CODE), unless nothing but arguments were to be checked.

usage: dask_microbenchmark.py [--json] [--only NAME,...] [--seconds S]
                              [--quick] [--workers N | --address TCP_ADDR]
                              [--check]
"""
import argparse
import json
import logging
import math
import multiprocessing
import signal
import sys
import time

TRIALS = 3
BATCH = 1000            # tasks or calls in flight (ray_perf: 1,000)
WORKERS = 4             # Manta's local cluster: 4 CPUs, 4 executors
MULTI_CLIENTS = 4       # as MULTI_CLIENTS in bench/microbenchmark.c
PUT_BIG_BYTES = 800000000
EXIT_USAGE = 2
EXIT_SKIP = 77

NO_PG = "dask has no placement groups (no resource reservation API)"

# (name, unit, function name in this module or None, reason when None)
METRICS = [
    ("single_client_get_calls", "calls/s", "get_calls", None),
    ("single_client_put_calls", "calls/s", "put_calls", None),
    ("single_client_put_gigabytes", "GB/s", "put_gigabytes", None),
    ("single_client_tasks_and_get_batch", "batches/s",
     "tasks_and_get_batch", None),
    ("single_client_wait_1k_refs", "rounds/s", "wait_1k_refs", None),
    ("single_client_tasks_sync", "tasks/s", "tasks_sync", None),
    ("single_client_tasks_async", "tasks/s", "tasks_async", None),
    ("multi_client_tasks_async", "tasks/s", "multi_client_async", None),
    ("1_1_actor_calls_sync", "calls/s", "actor_calls_sync", None),
    ("1_1_actor_calls_async", "calls/s", "actor_calls_async", None),
    ("n_n_actor_calls_async", "calls/s", "n_n_actor_calls_async", None),
    ("placement_group_create/removal", "groups/s", None, NO_PG),
]


def noop():
    """The task: Manta's noop() in libbench_noop.so returns nothing too."""
    return None


class NoopActor:
    """The actor: one method that does nothing."""

    def noop(self):
        return None


# ---- tasks --------------------------------------------------------------

def submit_batch(client, n):
    return [client.submit(noop, pure=False) for _ in range(n)]


def batch_round(client, n):
    """Submit n tasks, wait for all of them; RET n."""
    from distributed import wait
    futs = submit_batch(client, n)
    wait(futs)
    for f in futs:
        if f.status != "finished":
            raise RuntimeError("task %s ended %s" % (f.key, f.status))
    return n


def tasks_sync(b, seconds):
    end, ops = time.monotonic() + seconds, 0
    while True:
        b.client.submit(noop, pure=False).result()
        ops += 1
        if time.monotonic() >= end:
            return ops


def tasks_async(b, seconds):
    end, ops = time.monotonic() + seconds, 0
    while True:
        ops += batch_round(b.client, b.batch)
        if time.monotonic() >= end:
            return ops


def tasks_and_get_batch(b, seconds):
    """Submit a batch, then get every result: ops are batches."""
    end, ops = time.monotonic() + seconds, 0
    while True:
        b.client.gather(submit_batch(b.client, b.batch))
        ops += 1
        if time.monotonic() >= end:
            return ops


def wait_1k_refs(b, seconds):
    """Take 1,000 refs one at a time as they become ready: ops are rounds.

    as_completed() is dask's call for this; Ray's ray.wait(not_ready) loop
    maps literally to wait(left, return_when="FIRST_COMPLETED"), which
    costs 10-20 ms per call over 1,000 futures here (0.05-0.1 rounds/s),
    too slow for a metric of a few seconds (bench/RESULTS.md).
    """
    from distributed import as_completed
    end, ops = time.monotonic() + seconds, 0
    while True:
        futs = submit_batch(b.client, b.batch)
        taken = sum(1 for _ in as_completed(futs))
        if taken != b.batch:
            raise RuntimeError("as_completed gave %d of %d" % (taken, b.batch))
        ops += 1
        if time.monotonic() >= end:
            return ops


# ---- clients in processes of their own (multi_client, n_n actors) ---------

_proc_client = None


def _proc_init(address):
    """Pool initializer: this process's own client to the scheduler."""
    global _proc_client
    from distributed import Client
    logging.getLogger("distributed").setLevel(logging.ERROR)
    _proc_client = Client(address, direct_to_workers=True)


def _proc_tasks(args):
    seconds, batch = args
    end, ops = time.monotonic() + seconds, 0
    while True:
        ops += batch_round(_proc_client, batch)
        if time.monotonic() >= end:
            return ops


def _proc_actor_calls(args):
    """Call every actor in turn, batch calls in flight, for `seconds`."""
    seconds, batch, handles = args
    from distributed.actor import Actor
    actors = [Actor(NoopActor, addr, key) for addr, key in handles]
    end, ops = time.monotonic() + seconds, 0
    while True:
        futs = [actors[i % len(actors)].noop() for i in range(batch)]
        for f in futs:
            f.result()
        ops += batch
        if time.monotonic() >= end:
            return ops


def client_pool(b):
    """MULTI_CLIENTS spawned processes, each with its own client (lazily)."""
    if b.pool is None:
        ctx = multiprocessing.get_context("spawn")
        # Each process connects before its first trial: the warm-up.
        b.pool = ctx.Pool(MULTI_CLIENTS, _proc_init, (b.address,))
    return b.pool


def multi_client_async(b, seconds):
    pool = client_pool(b)
    return sum(pool.map(_proc_tasks, [(seconds, b.batch)] * MULTI_CLIENTS,
                        chunksize=1))


# ---- actors -------------------------------------------------------------

def make_actor(b, worker=None):
    kw = {"workers": [worker]} if worker else {}
    return b.client.submit(NoopActor, actor=True, pure=False, **kw).result()


def actor_calls_sync(b, seconds):
    if b.actor is None:
        b.actor = make_actor(b)
    end, ops = time.monotonic() + seconds, 0
    while True:
        b.actor.noop().result()
        ops += 1
        if time.monotonic() >= end:
            return ops


def actor_calls_async(b, seconds):
    if b.actor is None:
        b.actor = make_actor(b)
    end, ops = time.monotonic() + seconds, 0
    while True:
        futs = [b.actor.noop() for _ in range(b.batch)]
        for f in futs:
            f.result()
        ops += b.batch
        if time.monotonic() >= end:
            return ops


def n_n_actor_calls_async(b, seconds):
    if not b.actors:
        workers = sorted(b.client.scheduler_info()["workers"])
        b.actors = [make_actor(b, w) for w in workers]
    handles = [(a._address, a.key) for a in b.actors]
    pool = client_pool(b)
    return sum(pool.map(_proc_actor_calls,
                        [(seconds, b.batch, handles)] * MULTI_CLIENTS, chunksize=1))


# ---- objects ------------------------------------------------------------

SMALL = b"\0" * 8


def put_calls(b, seconds):
    end, ops = time.monotonic() + seconds, 0
    while True:
        # hash=False: a new object each time, as ray.put and mt_put.
        b.client.scatter(SMALL, hash=False)
        ops += 1
        if time.monotonic() >= end:
            return ops


def get_calls(b, seconds):
    if b.small is None:
        b.small = b.client.scatter(SMALL, hash=False)
    end, ops = time.monotonic() + seconds, 0
    while True:
        if b.client.gather(b.small) != SMALL:
            raise RuntimeError("gather returned other bytes")
        ops += 1
        if time.monotonic() >= end:
            return ops


def put_gigabytes(b, seconds):
    """Ops are gigabytes (1e9 bytes) put."""
    if b.big is None:
        b.big = bytes(PUT_BIG_BYTES)
    end, ops = time.monotonic() + seconds, 0.0
    while True:
        fut = b.client.scatter(b.big, hash=False)
        del fut                 # free the worker's copy, as Manta evicts
        ops += PUT_BIG_BYTES / 1e9
        if time.monotonic() >= end:
            return ops


# ---- the suite ----------------------------------------------------------

class Bench:
    """Shared state of one run: the cluster, the client, lazy fixtures."""

    def __init__(self, address, batch=BATCH, workers=WORKERS):
        self.address = address
        self.batch = batch
        self.workers = workers
        self.cluster = None
        self.client = None
        self.pool = None
        self.actor = None
        self.actors = []
        self.small = None
        self.big = None

    def start(self):
        from distributed import Client, LocalCluster
        if self.address is None:
            self.cluster = LocalCluster(
                n_workers=self.workers, threads_per_worker=1, processes=True,
                host="127.0.0.1", dashboard_address=None,
                silence_logs=logging.ERROR)
            self.address = self.cluster.scheduler_address
        self.client = Client(self.address, direct_to_workers=True)
        self.client.wait_for_workers(self.workers if self.cluster else 1,
                                     timeout=60)

    def stop(self):
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
        self.actor, self.actors, self.small = None, [], None
        if self.client is not None:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def measure(b, fn, seconds):
    """Warm-up, then TRIALS trials: (mean, population stdev) of the rates."""
    fn(b, seconds / 4)
    rates = []
    for _ in range(TRIALS):
        t0 = time.monotonic()
        ops = fn(b, seconds)
        rates.append(ops / (time.monotonic() - t0))
    mean = sum(rates) / TRIALS
    return mean, math.sqrt(sum((r - mean) ** 2 for r in rates) / TRIALS)


def report(name, unit, json_mode, first, mean=None, stdev=None, why=None):
    if json_mode:
        if why is None:
            body = '{"value": %.4f, "stdev": %.4f, "unit": "%s"}' % (
                mean, stdev, unit)
        else:
            body = json.dumps({"value": None, "unit": unit, "reason": why})
        print('%s\n  "%s": %s' % ("{" if first else ",", name, body), end="")
    elif why is None:
        print("%s per second %.2f +- %.2f" % (name, mean, stdev))
    else:
        print("%s n/a (%s)" % (name, why))
    sys.stdout.flush()


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="dask_microbenchmark.py",
        description="Run `manta microbenchmark`'s suite on a dask.distributed "
                    "LocalCluster (4 worker processes x 1 thread), or on the "
                    "scheduler at --address. Each metric: a warm-up, then 3 "
                    "trials of S seconds; mean +- stdev.",
        epilog="metrics: " + ", ".join(m[0] for m in METRICS))
    p.add_argument("--json", action="store_true",
                   help="one JSON object {metric: {value, stdev, unit}}; "
                        "n/a metrics have value null and a reason")
    p.add_argument("--only", metavar="NAME,...",
                   help="run only these metrics")
    p.add_argument("--seconds", type=float, default=2.0, metavar="S",
                   help="length of each of the 3 trials (default 2)")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: 0.05-s trials, batches of 100, no 800 MB put "
                        "(its figures are not comparable)")
    p.add_argument("--workers", type=int, default=WORKERS, metavar="N",
                   help="LocalCluster worker processes, 1 thread each "
                        "(default %d, as Manta's local cluster)" % WORKERS)
    p.add_argument("--address", metavar="TCP_ADDR",
                   help="a running dask scheduler (default: start a "
                        "LocalCluster)")
    p.add_argument("--check", action="store_true",
                   help="only check the arguments")
    a = p.parse_args(argv)
    if not (0 < a.seconds <= 600):
        p.error("invalid --seconds %r (0 < S <= 600)" % a.seconds)
    if not (1 <= a.workers <= 64):
        p.error("invalid --workers %r (1..64)" % a.workers)
    names = [m[0] for m in METRICS]
    if a.only is not None:
        a.only = [n for n in a.only.split(",") if n]
        for n in a.only:
            if n not in names:
                p.error("unknown metric '%s' (see --help)" % n)
    else:
        a.only = names
    if a.quick:
        a.seconds = 0.05
        a.only = [n for n in a.only if n != "single_client_put_gigabytes"]
    return a


def main(argv):
    a = parse_args(argv)
    if a.check:
        return 0
    try:
        import distributed  # noqa: F401
    except ImportError:
        print("dask_microbenchmark: python3-distributed is not installed "
              "(deploy/install-deps.sh --bench installs it)", file=sys.stderr)
        return EXIT_SKIP
    logging.getLogger("distributed").setLevel(logging.ERROR)
    # SIGTERM (a ctest timeout, a kill) unwinds through b.stop() too.
    signal.signal(signal.SIGTERM, lambda sig, frame: sys.exit(128 + sig))
    b = Bench(a.address, 100 if a.quick else BATCH, a.workers)
    status, first = 0, True
    try:
        b.start()
        for name, unit, fn, why in METRICS:
            if name not in a.only:
                continue
            if fn is None:
                report(name, unit, a.json, first, why=why)
            else:
                try:
                    mean, stdev = measure(b, globals()[fn], a.seconds)
                    report(name, unit, a.json, first, mean, stdev)
                except Exception as e:  # report it, go on with the others
                    status = 1
                    print("dask_microbenchmark: %s: %s: %s" %
                          (name, type(e).__name__, e), file=sys.stderr)
                    report(name, unit, a.json, first,
                           why="failed: %s" % type(e).__name__)
            first = False
    finally:
        b.stop()
    if a.json:
        print("{}" if first else "\n}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
