"""test_admin.py -- the admin API of libmanta (manta/admin.h: cluster status,
listings with filters, following tasks by id, cancel by id; actors, gangs
and placement groups by id or name) from a C driver, sdk_admin.c, against
the fake accelerator cluster (TPU slices, a GPU node, a CPU node). Every
case connects one-shot, as the manta command does.
"""
import os
import subprocess
import time

from accel_cluster import AccelCluster
from harness import BIN, check, main

DRIVER = os.path.join(BIN, "sdk_admin")
LIB_DIR = os.path.normpath(os.path.join(BIN, "..", "lib"))


def admin(case, addr, *extra, timeout=120):
    t0 = time.monotonic()
    p = subprocess.run([DRIVER, case, addr] + list(extra),
                       capture_output=True, text=True, timeout=timeout)
    check(p.returncode == 0, "sdk_admin %s exited %d:\n%s%s" % (
        case, p.returncode, p.stdout, p.stderr))
    print("  sdk_admin %s: %.2fs %s" % (case, time.monotonic() - t0,
                                        p.stdout.strip()))


def test_admin_api():
    with AccelCluster(env={"TPU_VISIBLE_CHIPS": "0,1,2,3"}) as c:
        for case in ("status", "tasks", "follow", "cancel", "gangs", "pgs"):
            admin(case, c.address)
        admin("actors", c.address, LIB_DIR)


if __name__ == "__main__":
    main([test_admin_api])
