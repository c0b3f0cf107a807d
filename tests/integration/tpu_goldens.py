"""tpu_goldens.py -- the TPU env golden table for integration tests.

The goldens of the TPU environment contract live in one file,
tests/golden/tpu_env.txt, which tests/unit/sched/test_accel_env.c computes
case by case through sched/accel_env.c. Integration tests compare what real
task processes got with the cases a fake cluster can reproduce, so the
values they check are the ones the unit test pins.

API
    case("grant_v4-16_2chips")    # a Case: .env {NAME: VALUE} (set),
                                  # .unset {NAME} (removed), .absent {NAME}
    mismatches(got, "gang_v4-16_device_r5", hosts={"h0": ip0, "h1": ip1})
                                  # [] when the process env `got` agrees
    check_env(got, name, what, hosts=None)   # harness.check of the above

The table's hosts are symbolic (h0, h1, ...): `hosts` maps them to the
slice's real worker addresses. Ports are the head's to draw, so port
variables are checked to be ports, and address lists by their hosts.
"""
import os

from harness import check

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                    "golden", "tpu_env.txt")
PORT_VARS = ("TPU_PROCESS_PORT", "MASTER_PORT", "MEGASCALE_PORT")
ADDRESS_VARS = ("TPU_PROCESS_ADDRESSES", "TORCH_TPU_SLICEBUILDER_ADDRESSES")
HOST_VARS = ("TPU_WORKER_HOSTNAMES", "MASTER_ADDR",
             "MEGASCALE_COORDINATOR_ADDRESS")

_cases = {}


class Case:
    def __init__(self, name):
        self.name = name
        self.inputs = {}        # "slice" -> ["v4-16"], "member" -> ["1", "1"]
        self.env = {}
        self.unset = set()
        self.absent = set()


def _read():
    cur = None
    with open(PATH) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("case "):
                cur = _cases[line[5:].strip()] = Case(line[5:].strip())
            elif line[0] == "-":
                cur.unset.add(line[1:])
            elif line[0] == "!":
                cur.absent.add(line[1:])
            elif line[0].isupper():
                k, v = line.split("=", 1)
                cur.env[k] = v
            else:
                w = line.split()
                cur.inputs[w[0]] = w[1:]


def case(name):
    if not _cases:
        _read()
    return _cases[name]


def _hosts_of(value, hosts):
    """"h0,h1" -> the real names, element by element."""
    return [hosts.get(h, h) for h in value.split(",")]


def _addr_hosts(value, hosts):
    """"h0:8471,h1:8471" -> [real h0, real h1] (the ports dropped)."""
    return [hosts.get(a.rsplit(":", 1)[0], a.rsplit(":", 1)[0])
            for a in value.split(",")]


def _one(k, want, got, hosts):
    """A message when the process's value of k disagrees, else None."""
    if got is None:
        return "%s missing, want %r" % (k, want)
    if k in PORT_VARS:
        ok = got.isdigit() and 0 < int(got) < 65536
    elif k in ADDRESS_VARS:
        ok = _addr_hosts(got, {}) == _addr_hosts(want, hosts)
    elif k in HOST_VARS:
        ok = got.split(",") == _hosts_of(want, hosts)
    else:
        ok = got == want
    return None if ok else "%s=%r, want %r" % (k, got, want)


def mismatches(got, name, hosts=None):
    """What of case name the environment got lacks or gets wrong."""
    c, hosts = case(name), hosts or {}
    out = [m for m in (_one(k, v, got.get(k), hosts)
                       for k, v in c.env.items()) if m]
    out += ["%s is set (%r), want it removed" % (k, got[k])
            for k in sorted(c.unset | c.absent) if k in got]
    return out


def check_env(got, name, what, hosts=None):
    bad = mismatches(got, name, hosts)
    check(not bad, "%s against golden %s:\n  %s" % (what, name,
                                                      "\n  ".join(bad)))
