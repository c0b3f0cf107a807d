"""test_man.py -- the man pages cmake/manpage.py writes from --help
(cmake/manpages.cmake, into build/man/; installed into share/man).

Every command `manta --help` lists has its manta-CMD(1) page, next to
manta(1), manta-head(8) and manta-worker(8); every option each program's
--help shows is an entry of its page; the pages are what the script makes
now (a stale page would disagree with the program) and byte for byte the
same when made again (gzip without a timestamp); and `man` renders each
with no warning, where man is installed.
"""
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile

from harness import BIN, MANTA, check, main

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SCRIPT = os.path.join(ROOT, "cmake", "manpage.py")
MAN_DIR = os.path.join(BIN, "..", "man")


def help_text(argv):
    p = subprocess.run(argv + ["--help"], capture_output=True, text=True,
                       timeout=30)
    return p.stdout


def commands():
    text = help_text([MANTA])
    block = text.split("commands:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in block.splitlines() if line.strip()]


def pages():
    """{page file name: argv of the program it documents}."""
    out = {"manta.1.gz": [MANTA],
           "manta-head.8.gz": [os.path.join(BIN, "manta-head")],
           "manta-worker.8.gz": [os.path.join(BIN, "manta-worker")]}
    for c in commands():
        out["manta-%s.1.gz" % c] = [MANTA, c]
    return out


def read_page(name):
    with gzip.open(os.path.join(MAN_DIR, name), "rt") as f:
        return f.read()


def test_every_command_has_a_page():
    want = sorted(pages())
    have = sorted(f for f in os.listdir(MAN_DIR) if f.endswith(".gz"))
    check(want == have, "pages %r, want %r" % (have, want))
    check(len(want) >= 16, "too few commands: %r" % want)


def test_every_option_is_an_entry():
    for name, argv in pages().items():
        page = read_page(name)
        check(".SH SYNOPSIS" in page and ".SH NAME" in page,
              "%s: no NAME/SYNOPSIS" % name)
        for line in help_text(argv).splitlines():
            m = re.match(r"  (-\S.*?)(\s{2,}|$)", line)
            if not m:
                continue
            entry = "\\fB%s\\fR" % m.group(1).replace("-", "\\-")
            check(entry in page, "%s: no entry for %r" % (name, m.group(1)))


def test_pages_are_current_and_reproducible():
    tmp = tempfile.mkdtemp(prefix="manta-it-man-")
    try:
        version = subprocess.run([MANTA, "--version"], capture_output=True,
                                 text=True, timeout=30).stdout.split()[-1]
        p = subprocess.run([sys.executable, SCRIPT, BIN, tmp, version],
                           capture_output=True, text=True, timeout=60)
        check(p.returncode == 0, "manpage.py: %s" % p.stderr)
        for name in pages():
            with open(os.path.join(tmp, name), "rb") as f:
                fresh = f.read()
            with open(os.path.join(MAN_DIR, name), "rb") as f:
                built = f.read()
            check(fresh == built, "%s differs from a fresh run" % name)
    finally:
        shutil.rmtree(tmp)


def test_pages_render_without_warnings():
    man = shutil.which("man")
    if not man:
        print("  (man not installed: rendering not checked)")
        return
    for name in pages():
        p = subprocess.run([man, "--warnings", "-l",
                            os.path.join(MAN_DIR, name)],
                           capture_output=True, text=True, timeout=30,
                           env=dict(os.environ, MANWIDTH="80",
                                    MAN_DISABLE_SECCOMP="1"))
        check(p.returncode == 0 and not p.stderr.strip(),
              "%s: rc %d: %s" % (name, p.returncode, p.stderr[:500]))
        check("SYNOPSIS" in p.stdout, "%s: rendered %r" % (name,
                                                          p.stdout[:200]))


if __name__ == "__main__":
    main([test_every_command_has_a_page, test_every_option_is_an_entry,
          test_pages_are_current_and_reproducible,
          test_pages_render_without_warnings])
