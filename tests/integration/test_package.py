"""test_package.py -- the Debian package (`make package`,
cmake/package.cmake) and the container files (deploy/container/).

cpack builds manta_<version>_<arch>.deb from this build dir into a temp
dir; dpkg-deb then shows what an operator gets: the control fields (a sane
Depends: the shared libraries' packages from dpkg-shlibdeps, python3,
adduser), the maintainer scripts (postinst, prerm, postrm, executable) and
the conffiles (/etc/manta/head.env, worker.env); every file lies under
/usr, /etc/manta or /lib/systemd/system (nothing under /usr/local), the
lib folder is /usr/lib/<multiarch> and the Python bridge is in
/usr/lib/python3/dist-packages; no file holds a path of the build or
source tree, and the CLI's only RUNPATH is $ORIGIN-relative. The units in
the package run /usr/bin's daemons. compose.yaml parses and wires a head
on Redis and two workers with a shared token, /dev/shm and healthchecks.
Installing the package on a fresh Debian 12 is deploy/package-check.sh.

Exits 77 (skipped) where cpack, dpkg-deb, dpkg-shlibdeps or file is
missing (deploy/install-deps.sh installs them) and for a sanitizer build
(make test SANITIZE=1), which is never packaged.
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

from harness import BIN, check, cmake_cache, main, sh

BUILD = os.path.abspath(os.path.join(BIN, ".."))
SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
COMPOSE = os.path.join(SRC, "deploy", "container", "compose.yaml")


def build_deb(out):
    """cpack's .deb of BUILD, written to out. RET its path."""
    sh(["cpack", "-G", "DEB", "-B", out], cwd=BUILD, timeout=50)
    debs = glob.glob(os.path.join(out, "manta_*.deb"))
    check(len(debs) == 1, "cpack made %s" % debs)
    return debs[0]


def check_control(deb):
    f = dict(ln.split(": ", 1) for ln in sh(
        ["dpkg-deb", "-f", deb, "Package", "Version", "Architecture",
         "Depends"]).splitlines())
    arch = sh(["dpkg", "--print-architecture"]).strip()
    check(f.get("Package") == "manta" and f.get("Architecture") == arch,
          "control: %r" % f)
    check(os.path.basename(deb) == "manta_%s_%s.deb" % (f["Version"], arch),
          "file name %s" % deb)
    deps = [d.split()[0] for d in f.get("Depends", "").split(", ")]
    want = ["python3", "adduser", "libc6", "libuv1", "libprotobuf-c1",
            "libhiredis0.14"]
    missing = [w for w in want if w not in deps]
    check(not missing and any(d.startswith("libgrpc") for d in deps),
          "Depends lacks %s: %s" % (missing, f.get("Depends")))
    check(not any(d.endswith("-dev") for d in deps), "Depends: %s" % deps)


def check_scripts(deb, work):
    ctl = os.path.join(work, "control")
    sh(["dpkg-deb", "-e", deb, ctl])
    for s in ("postinst", "prerm", "postrm"):
        p = os.path.join(ctl, s)
        check(os.access(p, os.X_OK), "%s missing or not executable" % s)
    with open(os.path.join(ctl, "postinst")) as f:
        check("adduser --system" in f.read(), "postinst makes no user")
    with open(os.path.join(ctl, "postrm")) as f:
        check("deluser" in f.read(), "postrm removes no user")
    with open(os.path.join(ctl, "conffiles")) as f:
        check(f.read().split() == ["/etc/manta/head.env",
                                   "/etc/manta/worker.env"], "conffiles")


def check_files(deb, work):
    names = [ln.split()[-1] for ln in sh(["dpkg-deb", "-c", deb]).splitlines()
             if not ln.startswith("l")]          # symlinks: "a -> b"
    files = [n[1:] for n in names if not n.endswith("/")]
    libdir = "/usr/" + cmake_cache("CMAKE_INSTALL_LIBDIR")
    want = ["/usr/bin/" + b for b in ("manta", "manta-head", "manta-worker",
                                      "manta-executor", "manta-guard")]
    want += [libdir + "/" + f for f in ("libmanta.so.0.1.0", "libmanta.a",
                                        "pkgconfig/manta.pc",
                                        "cmake/Manta/MantaConfig.cmake")]
    want += ["/usr/include/manta/manta.h", "/usr/share/doc/manta/deploy.md",
             "/usr/lib/python3/dist-packages/manta/__init__.py",
             "/usr/lib/python3/dist-packages/manta/_installed.py",
             "/lib/systemd/system/manta-head.service",
             "/lib/systemd/system/manta-worker.service",
             "/etc/manta/head.env", "/etc/manta/worker.env"]
    missing = [w for w in want if w not in files]
    check(not missing, "not in the package: %s" % missing)
    check(libdir.startswith("/usr/lib/") and libdir != "/usr/lib/",
          "lib folder %s, not /usr/lib/<multiarch>" % libdir)
    stray = [f for f in files if f.startswith("/usr/local/") or not
             f.startswith(("/usr/", "/etc/manta/", "/lib/systemd/system/"))]
    check(not stray, "files outside /usr, /etc/manta, units: %s" % stray)

    root = os.path.join(work, "root")
    sh(["dpkg-deb", "-x", deb, root])
    # A path of this machine: the build or source tree (grep -F over
    # every byte, binaries included).
    p = subprocess.run(["grep", "-rlF", "-e", BUILD, "-e", SRC, root],
                       capture_output=True, text=True)
    check(p.returncode == 1, "build paths in: %s" % p.stdout.split())
    dyn = sh(["readelf", "-d", os.path.join(root, "usr/bin/manta")])
    rpath = [ln for ln in dyn.splitlines() if "RPATH" in ln or "RUNPATH" in ln]
    check(all("[$ORIGIN/" in ln for ln in rpath), "manta: %s" % rpath)
    with open(os.path.join(root, "lib/systemd/system/manta-head.service")) as f:
        check("ExecStart=/usr/bin/manta-head " in f.read(), "head unit")
    with open(os.path.join(root, "usr/lib/python3/dist-packages/manta/"
                                 "_installed.py")) as f:
        rel = f.read().split('LIBDIR = "')[1].split('"')[0]
    check(os.path.normpath(os.path.join(
        "/usr/lib/python3/dist-packages/manta", rel)) == libdir,
        "the bridge looks for libmanta in %s" % rel)


def test_package():
    work = tempfile.mkdtemp(prefix="manta-it-package-")
    try:
        deb = build_deb(work)
        check_control(deb)
        check_scripts(deb, work)
        check_files(deb, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_compose():
    import yaml
    with open(COMPOSE) as f:
        svc = yaml.safe_load(f)["services"]
    check(set(svc) == {"token", "redis", "head", "worker-1", "worker-2"},
          "services %s" % sorted(svc))
    head = svc["head"]
    check("redis://redis:6379" in head["command"] and
          head["command"][0] == "head", "head: %s" % head["command"])
    check(svc["token"]["restart"] == "no", "token service restarts")
    for name in ("head", "worker-1", "worker-2"):
        s = svc[name]
        check(s["environment"]["MANTA_AUTH_TOKEN_FILE"].startswith(
            "/var/lib/manta/secret/"), "%s: token" % name)
        test = " ".join(s["healthcheck"]["test"])
        check("manta status" in test, "%s: healthcheck %s" % (name, test))
    for name in ("worker-1", "worker-2"):
        s = svc[name]
        check(s["command"][0] == "worker" and "head:6380" in s["command"],
              "%s: %s" % (name, s["command"]))
        check(s.get("shm_size"), "%s: no shm_size" % name)
        check(s["depends_on"]["head"]["condition"] == "service_healthy",
              "%s starts before the head is healthy" % name)


if __name__ == "__main__":
    missing = [t for t in ("cpack", "dpkg-deb", "dpkg-shlibdeps", "file")
               if not shutil.which(t)]
    if missing or cmake_cache("MT_SANITIZE") == "ON":
        print("SKIP: %s" % (("no " + ", ".join(missing)) if missing
                            else "a sanitizer build is never packaged"))
        sys.exit(77)
    main([test_package, test_compose])
