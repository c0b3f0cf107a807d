"""gang_member.py -- what a gang member runs in test_gangs.py.

usage: gang_member.py OUT_DIR MODE [ARG...]

Writes its whole environment as JSON to OUT_DIR/env-a<ATTEMPT>-r<RANK>.json
and its pid to OUT_DIR/pid-a<ATTEMPT>-r<RANK>, prints one line, then:
  exit0                  exit 0
  sleep S                sleep S seconds, exit 0
  fail R CODE            rank R exits CODE at once; the others sleep 60
  hang-first             attempt 0 sleeps 60 (to be killed); later exit 0
"""
import json
import os
import sys
import time

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
