#!/usr/bin/env bash
# package-check.sh -- the Debian package's acceptance (issue 17) on a
# brand-new Debian 12 root. Run as root from the checkout:
#   make package && sudo deploy/package-check.sh build/manta_*.deb
#
# The root is a debootstrap minbase of bookworm, cached as a tarball in
# ${TMPDIR:-/tmp}/manta-fresh/bookworm-minbase.tar (the one
# /work/shared/tools/fresh-debian-check.sh makes; made here the same way
# when missing) and unpacked afresh each run. Steps, in the root:
#   1. apt-get install ./manta_*.deb on the bare root: the Depends alone
#      must be enough for `manta start --head`, `python3 -c "import manta;
#      manta.connect()"` with no environment variables, a command task run
#      through the Python bridge, `manta microbenchmark` (one metric),
#      and `manta stop`;
#   2. a toolchain (gcc, make, cmake, pkg-config and the -dev packages
#      manta.pc names in Requires.private) builds examples/c/tasks.c with
#      `pkg-config --cflags --libs manta` and with a CMake project calling
#      find_package(Manta); both run against a new cluster (8 tasks, sum
#      204);
#   3. apt-get purge manta: the user and group manta are gone, and no file
#      is left that was not there before step 1, unless a package still
#      installed owns it, the toolchain install made it, or it lies in
#      apt/dpkg's state, caches or logs, /tmp or /root.
# The cluster steps run in a network namespace of their own (only lo), so
# no port of this machine is used. Exit 0 when every step passed.
set -u

deb=${1:-}
if [ -z "$deb" ] || [ ! -f "$deb" ]; then
    echo "usage: package-check.sh MANTA_DEB (e.g. build/manta_0.1.0_amd64.deb)" >&2
    exit 2
fi
if [ "$(id -u)" != 0 ]; then
    echo "package-check: run as root (debootstrap, chroot, mount)" >&2
    exit 2
fi
src=$(cd "$(dirname "$0")/.." && pwd)
base=${TMPDIR:-/tmp}/manta-fresh
tarball=$base/bookworm-minbase.tar
mkdir -p "$base"

fail() { echo "FAIL: $*"; exit 1; }
step() { echo "--- $*"; }

make_tarball() {
    command -v debootstrap >/dev/null ||
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap \
            >/dev/null || fail "cannot install debootstrap"
    local mirror pristine
    mirror=$(awk '/^URIs:/{print $2; exit}' \
        /etc/apt/sources.list.d/debian.sources)
    pristine=$(mktemp -d "$base/pristine.XXXX")
    debootstrap --variant=minbase bookworm "$pristine" "$mirror" \
        >"$base/debootstrap.log" 2>&1 || fail "debootstrap ($base/debootstrap.log)"
    cp /etc/apt/sources.list.d/debian.sources \
        "$pristine/etc/apt/sources.list.d/" 2>/dev/null
    tar -C "$pristine" -cf "$tarball.tmp.$$" . && mv "$tarball.tmp.$$" "$tarball"
    rm -rf "$pristine"
}

[ -f "$tarball" ] || { step "making $tarball (debootstrap)"; make_tarball; }
root=$(mktemp -d "$base/pkgroot.XXXX")
lists=$(mktemp -d "$base/pkglists.XXXX")     # file lists of the root
cleanup() {
    local p
    for p in /proc/[0-9]*; do      # whatever still runs inside the root
        [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && kill -9 "${p#/proc/}" 2>/dev/null
    done
    for m in dev/shm dev/pts dev sys proc; do umount -l "$root/$m" 2>/dev/null; done
    rm -rf "$root" "$lists"
}
trap cleanup EXIT
tar -C "$root" -xf "$tarball" || fail "unpacking $tarball"
mount --bind /proc "$root/proc"; mount --bind /sys "$root/sys"
mount --bind /dev "$root/dev"; mount --bind /dev/pts "$root/dev/pts"
mount -t tmpfs tmpfs "$root/dev/shm"
cp /etc/resolv.conf "$root/etc/" 2>/dev/null
mkdir -p "$root/root/probe"
cp "$deb" "$root/root/"
cp "$src/examples/c/tasks.c" "$root/root/probe/"
pkg=/root/$(basename "$deb")
log=$base/package-check-$(date +%s).log
: >"$log"

# in_root CMD: CMD in the root with a clean environment; its output goes
# to the log. net_root CMD: the same in a network namespace with only lo.
ENV=(env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
     DEBIAN_FRONTEND=noninteractive)
in_root() { chroot "$root" "${ENV[@]}" /bin/bash -ec "$1" >>"$log" 2>&1; }
net_root() {
    unshare --net /bin/sh -c 'ip link set lo up && exec "$@"' sh \
        chroot "$root" "${ENV[@]}" /bin/bash -ec "$1" >>"$log" 2>&1
}
# The paths dpkg lists (FILES: its .list files) as find sees them in the
# root: /lib, /bin, /sbin are /usr's (merged /usr).
dpkg_paths() {
    cat "$@" | sed -e 's#^#.#' -e 'p' -e 's#^\./\(lib\|bin\|sbin\)/#./usr/\1/#' |
        sort -u
}
# The root's file list, minus what changes on its own.
files() {
    (cd "$root" && find . \( -path ./proc -o -path ./sys -o -path ./dev \
        -o -path ./run -o -path ./tmp -o -path ./root -o -path ./var/cache \
        -o -path ./var/lib/apt -o -path ./var/lib/dpkg -o -path ./var/log \
        \) -prune -o -print | sort)
}

START='manta start --head --node-ip 127.0.0.1 --num-cpus 2 --object-store-memory 64MiB'
PY_TASK='
import sys, manta
c = manta.connect()
code = "import manta; manta.report_result(b\"sum=204\")"
t = c.submit([sys.executable, "-c", code])
print(t.result(timeout=60).bytes().decode())
'
CMAKELISTS='cmake_minimum_required(VERSION 3.18)
project(probe C)
find_package(Manta 0.1 REQUIRED)
add_executable(probe_cmake tasks.c)
target_link_libraries(probe_cmake Manta::manta)'
SECONDS=0

step "apt-get update"
in_root "apt-get update -qq" || fail "apt-get update (log: $log)"
files >"$lists/files.before"

step "1. apt-get install $pkg on the bare root"
in_root "apt-get install -y -qq $pkg" || fail "installing the package (log: $log)"
files >"$lists/files.installed"
dpkg_paths "$root"/var/lib/dpkg/info/manta.list >"$lists/manta"
in_root "getent passwd manta && test -f /etc/manta/head.env &&
    test -f /lib/systemd/system/manta-worker.service" ||
    fail "no manta user, /etc/manta or units after install (log: $log)"
net_root "$START
    python3 -c 'import manta; manta.connect()'
    python3 -c '$PY_TASK' | tee /root/py.out
    grep -q sum=204 /root/py.out
    manta microbenchmark --address \$(cat /tmp/manta/head.addr) \
        --only single_client_tasks_sync --seconds 0.2
    manta stop" || fail "cluster with the bare package (log: $log)"
files >"$lists/files.ran"

step "2. toolchain; builds with pkg-config and find_package(Manta)"
in_root "apt-get install -y -qq --no-install-recommends gcc libc6-dev make \
    cmake pkg-config libgrpc-dev libprotobuf-c-dev libuv1-dev" ||
    fail "installing the toolchain (log: $log)"
files >"$lists/files.toolchain"
in_root "cd /root/probe
    cc tasks.c -o probe_pc \$(pkg-config --cflags --libs manta)
    printf '%s\n' '$CMAKELISTS' > CMakeLists.txt
    cmake -S . -B b >/dev/null && cmake --build b >/dev/null" ||
    fail "building tasks.c against the package (log: $log)"
net_root "$START
    cd /root/probe
    ./probe_pc | tee pc.out && grep -q 204 pc.out
    ./b/probe_cmake | tee cm.out && grep -q 204 cm.out
    python3 -c 'import manta; manta.connect()'
    manta stop" || fail "the probes against a cluster (log: $log)"

step "3. apt-get purge manta"
in_root "apt-get purge -y -qq manta" || fail "purge (log: $log)"
in_root "! getent passwd manta && ! getent group manta" ||
    fail "the user or group manta outlived the purge"
files >"$lists/files.after"
# Left behind: new since before step 1, and none of: made by installing
# the package's dependencies (and its postinst: adduser's /etc/passwd-
# backups), made by the toolchain install, owned by a package.
dpkg_paths "$root"/var/lib/dpkg/info/*.list >"$lists/owned"
comm -23 "$lists/files.installed" "$lists/manta" >"$lists/deps"
comm -13 "$lists/files.ran" "$lists/files.toolchain" >"$lists/toolchain"
comm -13 "$lists/files.before" "$lists/files.after" |
    comm -23 - "$lists/deps" | comm -23 - "$lists/toolchain" |
    comm -23 - "$lists/owned" >"$lists/left"
if [ -s "$lists/left" ]; then
    echo "left behind after the purge:"; cat "$lists/left"
    fail "the purge left $(wc -l <"$lists/left") paths (log: $log)"
fi
echo "package-check: $(basename "$deb") passed on a fresh Debian 12 in ${SECONDS}s (log: $log)"
