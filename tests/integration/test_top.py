"""test_top.py -- `manta top` against a live cluster: one frame of plain
lines (--once, or stdout not a terminal) shows the node, its bars and a
running task; --interval repeats frames until a signal; under a pty the
full-screen mode enters the alternate screen, redraws in place, follows a
window resize, and leaves on `q` (or SIGTERM) with the alternate screen
left and the tty modes as they were. Bad flags exit 2 with the usage; a
head that is away fails with one clear line, before any escape is drawn.
"""
import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import termios
import time

from harness import (FAST, MANTA, check, free_port, main, new_dir, run,
                     status, wait_until)

ENTER = b"\x1b[?1049h"
LEAVE = b"\x1b[?25h\x1b[?1049l"
HOME = b"\x1b[H"


def start_cluster():
    """Head + worker with 2 CPUs and 4 TPU chips, one task running.
    RET (dir, node id)."""
    d = new_dir("top")
    run(["start", "--head", "--port", str(free_port()), "--node-ip",
         "127.0.0.1", "--temp-dir", d, "--num-cpus", "2", "--resources",
         '{"TPU": 4}'] + FAST)
    run(["submit", "--temp-dir", d, "--no-wait", "--name", "top-sleeper",
         "--", "sleep", "120"])
    st = wait_until(lambda: (lambda s: s["running_tasks"] >= 1 and s)(
        status(d)), 30, "the task to run")
    return d, st["nodes"][0]["node_id"]


def top(args, timeout=20):
    return subprocess.run([MANTA, "top"] + args, capture_output=True,
                          timeout=timeout)


def test_usage():
    p = top(["--help"])
    check(p.returncode == 0 and b"usage: manta top" in p.stdout, "help")
    for bad in (["--interval", "0"], ["--interval", "abc"],
                ["--interval", "nan"], ["--tasks", "-1"], ["--tasks", "x"],
                ["--bogus"], ["extra"], ["--address", "noport"]):
        p = top(bad)
        check(p.returncode == 2 and b"usage: manta top" in p.stderr,
              "%s: %d %r" % (bad, p.returncode, p.stderr))


def test_unreachable():
    addr = "127.0.0.1:%d" % free_port()
    p = top(["--once", "--address", addr])
    check(p.returncode == 1, "rc %d" % p.returncode)
    err = p.stderr.decode()
    check(err.startswith("manta top: cannot reach the head at " + addr),
          "stderr: %r" % err)
    check(p.stdout == b"", "stdout: %r" % p.stdout)
    # Full screen too: the error comes before the screen is taken.
    out, rc, _ = on_pty(["--address", addr], lambda fd, pid, got: None)
    check(rc == 1 and ENTER not in out and
          b"cannot reach the head" in out, "pty: %d %r" % (rc, out))


def check_frame(text, node_id):
    lines = text.splitlines()
    check(lines and lines[0].startswith("manta top - cluster "), text)
    check("Nodes: 1 alive, 0 dead" in text, text)
    check("Tasks: 1 running" in text, text)
    row = [l for l in lines if l.startswith(node_id[:16])]
    check(len(row) == 1 and "ALIVE" in row[0] and "%" in row[0] and
          "[#" in row[0], "node row: %r in %s" % (row, text))
    check(any(l.startswith("TPU  [") and "100%" not in l for l in lines),
          text)
    task = [l for l in lines if l.endswith("top-sleeper")]
    check(len(task) == 1 and task[0].startswith("t"), "task: %r" % task)


def test_once_and_pipe(d, node_id):
    for args in (["--once"], [], ["--plain"]):
        p = top(["--temp-dir", d] + args)
        check(p.returncode == 0, "rc %d: %r" % (p.returncode, p.stderr))
        check(b"\x1b" not in p.stdout, "escapes in %r" % p.stdout)
        check_frame(p.stdout.decode(), node_id)
    # A width is honoured when one is given.
    p = subprocess.run([MANTA, "top", "--once", "--temp-dir", d],
                       capture_output=True, timeout=20,
                       env=dict(os.environ, COLUMNS="50"))
    check(max(len(l) for l in p.stdout.decode().splitlines()) <= 50,
          p.stdout)


def test_interval(d, node_id):
    p = subprocess.Popen([MANTA, "top", "--temp-dir", d, "--interval",
                          "0.2"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    got = [b""]

    def frames():
        if select.select([p.stdout], [], [], 0.1)[0]:
            got[0] += os.read(p.stdout.fileno(), 65536)
        return got[0].count(b"manta top - cluster") >= 3
    try:
        wait_until(frames, 20, "three frames")
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=10)
    check(b"\x1b" not in got[0], "escapes")
    first = got[0].decode().split("manta top - cluster")[1]
    check_frame("manta top - cluster" + first, node_id)


def on_pty(args, act, rows=30, cols=100):
    """Run `manta top ARGS` on a pty of rows x cols; act(fd, pid, got)
    steers it (got() reads what it drew so far). RET (all output, exit
    code, the pty's local modes once it has exited)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(MANTA, [MANTA, "top"] + args)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols,
                                                     0, 0))
    buf = [b""]

    def got():
        while select.select([fd], [], [], 0.05)[0]:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # EIO: the child has closed the pty
                return buf[0]
            if not chunk:
                break
            buf[0] += chunk
        return buf[0]
    try:
        act(fd, pid, got)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 15:
            got()
            wpid, st = os.waitpid(pid, os.WNOHANG)
            if wpid:
                got()
                return (buf[0], os.waitstatus_to_exitcode(st),
                        termios.tcgetattr(fd)[3])
        raise AssertionError("manta top did not exit: %r" % buf[0][-300:])
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass
        os.close(fd)


def last_frame(out):
    """The text of the last full frame drawn."""
    frame = out.rsplit(HOME, 1)[-1].split(b"\x1b[J")[0]
    return frame.replace(b"\x1b[K", b"").replace(b"\r", b"").decode()


def test_full_screen(d, node_id):
    modes = {}

    def act(fd, pid, got):
        wait_until(lambda: got().count(HOME) >= 3, 20, "three frames")
        modes["raw"] = termios.tcgetattr(fd)[3]
        os.write(fd, b"q")
    out, rc, lflag = on_pty(["--temp-dir", d, "--interval", "0.2"], act)
    check(rc == 0, "rc %d" % rc)
    check(out.startswith(ENTER), "start: %r" % out[:40])
    check(out.endswith(LEAVE), "end: %r" % out[-40:])
    frame = last_frame(out[:-len(LEAVE)])
    check_frame(frame, node_id)
    check(len(frame.splitlines()) <= 30, "taller than the window")
    check(max(len(l) for l in frame.splitlines()) <= 100, "wider")
    check(not modes["raw"] & termios.ECHO, "echo on while drawing")
    check(lflag & termios.ECHO and lflag & termios.ICANON,
          "tty modes not restored")


def fits(out, cols):
    """The last frame drawn in full is at most cols wide."""
    done = out.rsplit(b"\x1b[J", 1)[0]
    if HOME not in done:
        return False
    return max(len(l) for l in last_frame(done).splitlines()) <= cols


def test_resize_and_sigterm(d, node_id):
    def act(fd, pid, got):
        wait_until(lambda: got().count(HOME) >= 1, 20, "a frame")
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 12, 60,
                                                         0, 0))
        os.kill(pid, signal.SIGWINCH)
        wait_until(lambda: fits(got(), 60), 20, "a frame for 60 columns")
        os.kill(pid, signal.SIGTERM)
    out, rc, _ = on_pty(["--temp-dir", d], act)
    check(rc == 128 + signal.SIGTERM, "rc %d" % rc)
    check(out.endswith(LEAVE), "end: %r" % out[-40:])
    frame = last_frame(out[:-len(LEAVE)])
    check(len(frame.splitlines()) <= 12, "taller: %r" % frame)
    check(max(len(l) for l in frame.splitlines()) <= 60, "wider: %r" % frame)


def test_live():
    d, node_id = start_cluster()
    for t in (test_once_and_pipe, test_interval, test_full_screen,
              test_resize_and_sigterm):
        t(d, node_id)


if __name__ == "__main__":
    main([test_usage, test_unreachable, test_live])
