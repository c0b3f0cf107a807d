"""test_install.py -- `cmake --install` (cmake/install.cmake) as a user of
the installed prefix sees it: the build dir is installed into a temp
prefix, and from then on only that prefix is used. The prefix holds the
binaries, libmanta.so.0.1.0 (SONAME libmanta.so.0) and libmanta.a, the
public headers, manta.pc, the CMake package and the docs, and every file
of install_manifest.txt lies inside it; `ldd PREFIX/bin/manta` finds
libmanta in PREFIX (RPATH $ORIGIN/../lib). examples/c/tasks.c is built
twice, with `pkg-config --cflags --libs manta` and with a CMakeLists.txt
calling find_package(Manta); a head started with PREFIX/bin/manta (no
MANTA_BIN_DIR, no LD_LIBRARY_PATH) runs a worker and its helpers from
PREFIX, and both programs get their tasks' results from it, as does a
third linked statically (libmanta.a + `pkg-config --static --libs`).
The Python bridge, installed into PREFIX/lib/python3/dist-packages (a
prefix other than /usr and /usr/local: PYTHONPATH is the one variable set),
loads PREFIX's libmanta (no MANTA_LIB), connects to that cluster and gets
the result of a command task that itself imports the installed bridge.
"""
import os
import shutil
import tempfile

from harness import (BIN, check, cmake_cache, free_port, main, new_dir,
                     read_pid, sanitizer_env, sh, wait_until)

BUILD = os.path.abspath(os.path.join(BIN, ".."))
SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLE = os.path.join(SRC, "examples", "c", "tasks.c")


# An ASan+UBSan build (make test SANITIZE=1): its libmanta needs programs
# built with the same sanitizers.
SAN = (["-fsanitize=address,undefined"] if cmake_cache("MT_SANITIZE") == "ON"
       else [])

LIBDIR = cmake_cache("CMAKE_INSTALL_LIBDIR")  # lib/x86_64-linux-gnu
PYDIR = "lib/python3/dist-packages"           # any prefix but /usr/local
PYTHON = "/usr/bin/python3"                   # Debian's, as users run it

# The installed bridge, as a user runs it: argv[1] the head, argv[2] the
# prefix. Its task imports the bridge too, to report its result.
PY_PROBE = """
import os, sys, manta
from manta import _lib
where = os.path.realpath(manta.__file__)
assert where.startswith(sys.argv[2] + "/"), "manta from " + where
c = manta.connect(sys.argv[1])
lib = os.path.realpath(_lib.lib()._name)
assert lib.startswith(sys.argv[2] + "/"), "libmanta from " + lib
code = "import manta; manta.report_result(b'sum=204')"
env = {k: v for k, v in os.environ.items()  # (LD_PRELOAD: ASan builds)
       if k in ("PYTHONPATH", "LD_PRELOAD", "ASAN_OPTIONS")}
t = c.submit([sys.executable, "-c", code], env=env)
print(t.result(timeout=60).bytes().decode())
"""

CMAKELISTS = """cmake_minimum_required(VERSION 3.18)
project(install_probe C)
find_package(Manta 0.1 REQUIRED)
add_executable(probe tasks.c)
target_link_libraries(probe Manta::manta)
"""


def env_prefix_only():
    """The environment minus anything pointing into the build tree."""
    env = dict(os.environ)
    for k in ("MANTA_BIN_DIR", "LD_LIBRARY_PATH", "MANTA_LIB",
              "PKG_CONFIG_PATH", "CMAKE_PREFIX_PATH"):
        env.pop(k, None)
    return env


def install(prefix):
    sh(["cmake", "--install", BUILD, "--prefix", prefix])


def check_layout(prefix):
    want = ["bin/manta", "bin/manta-head", "bin/manta-worker",
            "bin/manta-executor", "bin/manta-guard",
            "bin/manta-microbenchmark", "lib/manta/libbench_noop.so",
            "share/man/man1/manta.1.gz", "share/man/man1/manta-start.1.gz",
            "share/man/man8/manta-head.8.gz",
            "share/man/man8/manta-worker.8.gz",
            "share/doc/manta/README.md", "share/doc/manta/sdk.md"]
    want += [LIBDIR + "/" + f for f in (
        "libmanta.so", "libmanta.so.0", "libmanta.so.0.1.0", "libmanta.a",
        "pkgconfig/manta.pc", "cmake/Manta/MantaConfig.cmake",
        "cmake/Manta/MantaConfigVersion.cmake",
        "cmake/Manta/MantaTargets.cmake")]
    want += ["include/manta/" + h for h in
             os.listdir(os.path.join(SRC, "sdk", "include", "manta"))]
    want += [PYDIR + "/manta/" + f for f in
             os.listdir(os.path.join(SRC, "sdk", "python", "manta"))
             if f.endswith(".py")] + [PYDIR + "/manta/_installed.py"]
    missing = [w for w in want if not os.path.exists(
        os.path.join(prefix, w))]
    check(not missing, "missing from the prefix: %s" % missing)
    lib = os.path.join(prefix, LIBDIR)
    check(os.readlink(os.path.join(lib, "libmanta.so")) ==
          "libmanta.so.0", "libmanta.so does not link to libmanta.so.0")
    dyn = sh(["readelf", "-d", os.path.join(lib, "libmanta.so.0.1.0")])
    check("[libmanta.so.0]" in dyn, "no SONAME libmanta.so.0:\n" + dyn)
    with open(os.path.join(BUILD, "install_manifest.txt")) as f:
        outside = [p for p in f.read().split() if
                   not p.startswith(prefix + "/")]
    check(not outside, "installed outside the prefix: %s" % outside)


def check_rpath(prefix):
    out = sh(["ldd", os.path.join(prefix, "bin", "manta")],
             env=env_prefix_only())
    line = [ln for ln in out.splitlines() if "libmanta" in ln]
    check(line and "not found" not in line[0], "ldd: libmanta:\n" + out)
    lib = os.path.realpath(line[0].split("=>")[1].split("(")[0].strip())
    check(lib.startswith(os.path.realpath(prefix) + "/"),
          "bin/manta loads %s, not the prefix's" % lib)


def build_pkg_config(prefix, work):
    env = env_prefix_only()
    env["PKG_CONFIG_PATH"] = os.path.join(prefix, LIBDIR, "pkgconfig")
    flags = sh(["pkg-config", "--cflags", "--libs", "manta"], env=env).split()
    check("-I" + SRC not in " ".join(flags), "cflags point at the source")
    libdir = sh(["pkg-config", "--variable=libdir", "manta"], env=env).strip()
    check(os.path.realpath(libdir) == os.path.realpath(
        os.path.join(prefix, LIBDIR)), "libdir %s" % libdir)
    exe = os.path.join(work, "probe_pc")
    sh(["cc", EXAMPLE, "-o", exe] + SAN + flags + ["-Wl,-rpath," + libdir],
       env=env, cwd=work)
    return exe


def build_static(prefix, work):
    """tasks.c linked with libmanta.a and `pkg-config --static`'s list."""
    env = env_prefix_only()
    env["PKG_CONFIG_PATH"] = os.path.join(prefix, LIBDIR, "pkgconfig")
    cflags = sh(["pkg-config", "--cflags", "manta"], env=env).split()
    libs = [f for f in sh(["pkg-config", "--static", "--libs", "manta"],
                          env=env).split() if f != "-lmanta"]
    exe = os.path.join(work, "probe_static")
    sh(["cc", EXAMPLE, "-o", exe] + SAN + cflags +
       [os.path.join(prefix, LIBDIR, "libmanta.a")] + libs, env=env,
       cwd=work)
    dyn = sh(["readelf", "-d", exe])
    check("libmanta" not in dyn, "the static probe needs libmanta.so")
    return exe


def build_cmake(prefix, work):
    env = env_prefix_only()
    env["CMAKE_PREFIX_PATH"] = prefix
    src = os.path.join(work, "cm")
    os.mkdir(src)
    shutil.copy(EXAMPLE, src)
    with open(os.path.join(src, "CMakeLists.txt"), "w") as f:
        f.write(CMAKELISTS)
    sh(["cmake", "-S", src, "-B", os.path.join(src, "b")] +
       (["-DCMAKE_C_FLAGS=" + " ".join(SAN)] if SAN else []), env=env)
    sh(["cmake", "--build", os.path.join(src, "b")], env=env)
    return os.path.join(src, "b", "probe")


def run_python(prefix, addr, work):
    """PY_PROBE with the prefix's python dir as the only variable set."""
    env = env_prefix_only()
    env["PYTHONPATH"] = os.path.join(prefix, PYDIR)
    env.update(sanitizer_env(os.path.join(prefix, LIBDIR)))
    out = sh([PYTHON, "-c", PY_PROBE, addr, os.path.realpath(prefix)],
             env=env, cwd=work, timeout=90)
    check("sum=204" in out, "the Python bridge's task gave:\n" + out)


def helpers(worker):
    """The binaries the worker's children run (its executors)."""
    exes = []
    for p in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % p) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if ppid == worker:
                exes.append(os.readlink("/proc/%s/exe" % p))
        except (OSError, ValueError, IndexError):
            continue
    return exes


def test_install_and_use():
    top = tempfile.mkdtemp(prefix="manta-it-install-")
    try:
        prefix = os.path.join(top, "prefix")
        work = os.path.join(top, "work")
        os.mkdir(work)
        install(prefix)
        check_layout(prefix)
        check_rpath(prefix)
        progs = [build_pkg_config(prefix, work), build_cmake(prefix, work),
                 build_static(prefix, work)]

        env = env_prefix_only()
        manta = os.path.join(prefix, "bin", "manta")
        port, d = free_port(), new_dir("install")
        sh([manta, "start", "--head", "--port", str(port), "--node-ip",
            "127.0.0.1", "--temp-dir", d, "--num-cpus", "2",
            "--object-store-memory", "64MiB"], env=env)
        for name in ("head", "worker"):
            exe = os.readlink("/proc/%d/exe" % read_pid(d, name))
            check(exe.startswith(prefix + "/bin/"),
                  "%s runs %s, not the prefix's" % (name, exe))
        worker = read_pid(d, "worker")
        addr = "127.0.0.1:%d" % port
        wait_until(lambda: helpers(worker), 10, "the worker's executors")
        bad = [e for e in helpers(worker) if not e.startswith(prefix + "/bin/")]
        check(not bad, "the worker runs helpers outside the prefix: %s" % bad)
        for prog in progs:
            out = sh([prog, addr], env=env, timeout=90)
            check("204" in out, "%s: no sum 204 in:\n%s" % (prog, out))
        out = sh([manta, "microbenchmark", "--address", addr, "--only",
                  "single_client_tasks_sync", "--seconds", "0.2"], env=env,
                 timeout=90)
        check("single_client_tasks_sync per second" in out,
              "microbenchmark from the prefix:\n" + out)
        run_python(prefix, addr, work)
        sh([manta, "stop", "--temp-dir", d], env=env)
        wait_until(lambda: not os.path.exists("/proc/%d" % worker), 10,
                   "the worker to end")
    finally:
        shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    main([test_install_and_use])
