"""gang_member.py -- what a gang member runs in test_gangs.py.

usage: gang_member.py OUT_DIR MODE [ARG...]

Writes its whole environment as JSON to OUT_DIR/env-a<ATTEMPT>-r<RANK>.json
and its pid to OUT_DIR/pid-a<ATTEMPT>-r<RANK>, prints one line, then:
  exit0                  exit 0
  sleep S                sleep S seconds, exit 0
  fail R CODE            rank R exits CODE at once; the others sleep 60
  hang-first             attempt 0 sleeps 60 (to be killed); later exit 0
  mesh                   use the addresses the gang was given: listen on
                         this process's entry of TPU_PROCESS_ADDRESSES
                         (rank 0 also on MASTER_ADDR:MASTER_PORT), connect
                         to every other entry and to the master, and write
                         OUT_DIR/mesh-<tag>.json; exit 0 when every peer
                         was reached and heard within 30 s, else 4
"""
import json
import os
import socket
import sys
import threading
import time



def split_addr(a):
    host, port = a.rsplit(":", 1)
    return host.strip("[]"), int(port)


def serve(addr, srv, expect, heard):
    """Accept `expect` connections on srv; record the id each sends."""
    srv.settimeout(30)
    try:
        for _ in range(expect):
            conn, _ = srv.accept()
            with conn:
                conn.settimeout(10)
                heard.append((addr, conn.makefile().readline().strip()))
    except OSError:
        pass
    finally:
        srv.close()


def reach(addr, me, deadline):
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(split_addr(addr), timeout=2) as s:
                s.sendall(("%s\n" % me).encode())
                return True
        except OSError:
            time.sleep(0.1)
    return False


def mesh(out, tag):
    """Every process of the gang reaches every other and the master."""
    addrs = [a for a in os.environ.get("TPU_PROCESS_ADDRESSES",
                                       "").split(",") if a]
    me = int(os.environ.get("CLOUD_TPU_TASK_ID", rank))
    world = int(os.environ["WORLD_SIZE"])
    master = "%s:%s" % (os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"])
    heard, threads = [], []
    mine = ([(addrs[me], len(addrs) - 1)] if addrs else []) + \
        ([(master, world - 1)] if rank == 0 else [])
    # Bind first (a failure ends the process), then accept meanwhile.
    servers = [(a, socket.create_server(split_addr(a)), n) for a, n in mine]
    for addr, srv, n in servers:
        threads.append(threading.Thread(target=serve,
                                        args=(addr, srv, n, heard)))
        threads[-1].start()
    deadline = time.monotonic() + 30
    peers = [a for i, a in enumerate(addrs) if i != me]
    peers += [master] if rank != 0 else []
    reached = [a for a in peers if reach(a, rank, deadline)]
    for t in threads:
        t.join(35)
    res = {"reached": reached, "peers": peers, "heard": heard,
           "served": [a for a, _ in mine]}
    with open(os.path.join(out, "mesh-%s.json" % tag), "w") as f:
        json.dump(res, f)
    want_heard = sum(n for _, n in mine)
    return len(reached) == len(peers) and len(heard) == want_heard


out, mode, args = sys.argv[1], sys.argv[2], sys.argv[3:]
rank = int(os.environ.get("MANTA_GANG_RANK", "-1"))
attempt = int(os.environ.get("MANTA_GANG_ATTEMPT", "-1"))
tag = "a%d-r%d" % (attempt, rank)
with open(os.path.join(out, "env-%s.json.tmp" % tag), "w") as f:
    json.dump(dict(os.environ), f)
os.rename(os.path.join(out, "env-%s.json.tmp" % tag),
          os.path.join(out, "env-%s.json" % tag))
with open(os.path.join(out, "pid-%s" % tag), "w") as f:
    f.write(str(os.getpid()))
print("hello from rank %d of %s" % (rank, os.environ.get("WORLD_SIZE")),
      flush=True)
if mode == "sleep":
    time.sleep(float(args[0]))
elif mode == "fail":
    if rank == int(args[0]):
        sys.exit(int(args[1]))
    time.sleep(60)
elif mode == "hang-first" and attempt == 0:
    time.sleep(60)
elif mode == "mesh":
    sys.exit(0 if mesh(out, tag) else 4)
