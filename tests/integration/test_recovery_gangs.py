"""test_recovery_gangs.py -- gangs outlive a head that dies (issue 15).

On the fake TPU cluster's two v4-16 slices (accel_cluster.py, slice-a and
slice-b, two hosts each), with the head's default storage (file:// in its
temp dir):

- gang A (one slice, host launch) runs two long members, followed by
  `manta submit`; gang B (--slices 2) waits PENDING for both slices.
- kill -9 the head, start it again on the same port and temp dir.
- A is RUNNING again at the same attempt, with the same member tasks on
  the same nodes (the same slice), and `manta list gangs` lists both; no
  member process starts twice (each appends a line to a file when it
  starts); A ends FINISHED, and its submitter with it.
- B, restored PENDING, starts once A gave its slice back; `manta gang
  cancel` ends it CANCELLED; every resource is back.
- a gang whose member exits 3 while the head is down ends FAILED with 3
  once the head is back, without starting anything again.
"""
import json
import os
import signal
import subprocess
import time

from accel_cluster import TPU_NAMES
from harness import (FAST, MANTA, check, main, new_dir, read_pid,
                     wait_until)
from test_gangs import cluster, gang_info

LINE = 'echo "$MANTA_GANG_ID $MANTA_GANG_RANK $MANTA_GANG_ATTEMPT" >> %s; %s'


def starts(log):
    try:
        with open(log) as f:
            return [tuple(x.split()) for x in f.read().splitlines()]
    except OSError:
        return []


def gangs(c):
    p = c.cli("list", "gangs", "--format", "json", check=True)
    return {g["gang_id"]: g for g in json.loads(p.stdout)["gangs"]}


def kill_head(c, pause=0.3):
    os.kill(read_pid(c.head_dir, "head"), signal.SIGKILL)
    time.sleep(pause)


def restart_head(c):
    """Start the head again on its port and temp dir."""
    port = c.address.rsplit(":", 1)[1]
    p = subprocess.run([MANTA, "start", "--head", "--no-worker", "--port",
                        port, "--node-ip", "127.0.0.1", "--temp-dir",
                        c.head_dir] + FAST + c.head_args,
                       capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, "head restart: %s%s" % (p.stdout, p.stderr))


def all_back(c):
    for n in c.status()["nodes"]:
        if n["resources_total"] != n["resources_available"]:
            return False
    return True


def test_gangs_survive_a_head_restart():
    with cluster(only=TPU_NAMES) as c:
        work = new_dir("rgang")
        log = os.path.join(work, "starts.log")
        a = subprocess.Popen(
            [MANTA, "submit", "--address", c.address, "--tpu", "v4-16",
             "--launch", "host", "--", "sh", "-c", LINE % (log, "sleep 7")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_until(lambda: len(starts(log)) == 2, 30, "A's members up")
            ga = starts(log)[0][0]
            p = c.cli("submit", "--tpu", "v4-16", "--slices", "2",
                      "--launch", "host", "--no-wait", "--", "sh", "-c",
                      LINE % (log, "sleep 60"), check=True)
            gb = p.stdout.strip().split()[-1]
            before = gang_info(c, ga)
            check(before["state"] == "RUNNING", "A: %s" % before)
            check(gang_info(c, gb)["state"] == "PENDING", "B not pending")

            kill_head(c)
            restart_head(c)
            after = gang_info(c, ga)
            check(after["state"] == "RUNNING" and
                  after.get("attempt", 0) == before.get("attempt", 0),
                  "A after the restart: %s" % after)
            key = [(m["rank"], m["task_id"], m["node_id"])
                   for m in before["members"]]
            check([(m["rank"], m["task_id"], m["node_id"])
                   for m in after["members"]] == key,
                  "A's members: %s, were %s" % (after["members"], key))
            check(after["slice_names"] == before["slice_names"],
                  "A's slices: %s, were %s" % (after["slice_names"],
                                               before["slice_names"]))
            listed = gangs(c)
            check(ga in listed and gb in listed, "listed: %s" % listed)
            check(listed[gb]["state"] == "PENDING", "B: %s" % listed[gb])

            wait_until(lambda: "recovery complete" in c.log("head"), 10,
                       "recovery done")
            hl = c.log("head")
            print("\n".join("  " + x for x in hl.splitlines()
                             if "gang" in x or "recover" in x))
            check("gang %s restored: running" % ga in hl, "A not restored")
            check("2 tasks adopted" in hl, "A's members not adopted")
            wait_until(lambda: gang_info(c, ga)["state"] == "FINISHED", 30,
                       "A finished")
            out, err = a.communicate(timeout=30)
            print("  A's submitter: exit %d" % a.returncode)
            check(a.returncode == 0, "A's submitter: %d %s%s" % (
                a.returncode, out, err[-2000:]))
        finally:
            if a.poll() is None:
                a.kill()
                a.wait()
        # B starts on both slices, once; then is cancelled.
        wait_until(lambda: gang_info(c, gb)["state"] == "RUNNING" and
                   len([s for s in starts(log) if s[0] == gb]) == 4, 30,
                   "B running")
        c.cli("gang", "cancel", gb, check=True)
        wait_until(lambda: gang_info(c, gb)["state"] == "CANCELLED", 20,
                   "B cancelled")
        runs = starts(log)
        check(sorted(runs) == sorted(
            [(ga, "0", "0"), (ga, "1", "0")] +
            [(gb, str(r), "0") for r in range(4)]),
            "each member started once: %s" % runs)
        wait_until(lambda: all_back(c), 20, "every resource back")


def test_members_end_while_the_head_is_away():
    """Rank 1 exits 3 while the head is down: the restarted head hears it
    and fails the gang with 3, as it would have."""
    with cluster(only=("a0", "a1")) as c:
        work = new_dir("rgang2")
        log = os.path.join(work, "starts.log")
        body = 'sleep 1.5; [ "$MANTA_GANG_RANK" = 1 ] && exit 3; exit 0'
        p = c.cli("submit", "--tpu", "v4-16", "--launch", "host",
                  "--max-restarts", "0", "--no-wait", "--", "sh", "-c",
                  LINE % (log, body), check=True)
        gid = p.stdout.strip().split()[-1]
        wait_until(lambda: len(starts(log)) == 2, 30, "members up")
        kill_head(c, 2.5)  # both members end meanwhile
        restart_head(c)
        wait_until(lambda: gang_info(c, gid)["state"] == "FAILED", 20,
                   "the gang failed")
        g = gang_info(c, gid)
        check(g["exit_code"] == 3 and g["attempt"] == 0, "gang: %s" % g)
        check(len(starts(log)) == 2, "started again: %s" % starts(log))
        wait_until(lambda: all_back(c), 20, "every resource back")


if __name__ == "__main__":
    main([test_gangs_survive_a_head_restart,
          test_members_end_while_the_head_is_away])
