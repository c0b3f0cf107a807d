#!/usr/bin/python3
"""fake_ssh.py -- stands in for ssh in test_up.py, which has no sshd: it
takes what `manta up`/`manta down` give ssh,

    fake_ssh.py --log FILE [--hang HOST]... SSH_OPTIONS... -- HOST COMMAND

appends its argv (after its own options) to FILE as one JSON line, and
runs COMMAND here with `sh -c`, as sshd runs it with the user's shell;
its stdin, stdout, stderr and exit code are the command's. A --hang host
never answers (the timeout test). The SSH part itself (keys, BatchMode,
the remote login) is not exercised."""
import json
import os
import sys
import time

args = sys.argv[1:]
log, hang = None, []
while args and args[0] in ("--log", "--hang"):
    if args[0] == "--log":
        log = args[1]
    else:
        hang.append(args[1])
    args = args[2:]
if log:
    with open(log, "a") as f:
        f.write(json.dumps(args) + "\n")
if "--" not in args or len(args) != args.index("--") + 3:
    sys.stderr.write("fake_ssh: expected ... -- HOST COMMAND, got %r\n" %
                     args)
    sys.exit(255)
host, command = args[-2], args[-1]
if host in hang:
    time.sleep(600)
os.execv("/bin/sh", ["sh", "-c", command])
