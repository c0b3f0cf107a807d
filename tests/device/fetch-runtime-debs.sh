#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# fetch-runtime-debs.sh -- download, as .deb files, the runtime libraries
# Manta's binaries need beyond what every Ubuntu 24.04 / Debian 12 base
# image has, so they can be carried to a machine without a package
# registry (the GPU device machine) and unpacked there with `dpkg -x`.
#
#   tests/device/fetch-runtime-debs.sh DIR [BUILD]
#
# BUILD (default: build) holds the binaries. The library set is the closure
# ldd reports for manta, manta-head, manta-worker, manta-executor,
# manta-store and libmanta.so (ldd already follows dependencies of
# dependencies), mapped to packages with dpkg -S. Packages of the base
# (libc6, libgcc-s1, libstdc++6, zlib1g) are skipped: the target has newer
# versions. libssl3 is kept: grpc needs libssl.so.3/libcrypto.so.3, which a
# minimal image may lack (gpu_check.sh uses the system's copy when there is
# one). Then the result is proved: the .debs are unpacked into a temp dir
# and every binary is resolved by the loader with only that dir and a copy
# of the base libraries on its path; any library found elsewhere fails the
# script.
#
# Needs: apt-get (the package registry), dpkg, ldd. Writes only DIR.
set -euo pipefail

die() { echo "fetch-runtime-debs: $*" >&2; exit 1; }

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: $0 DIR [BUILD]"
DIR=$1
BUILD=${2:-build}
BASE_PKGS=" libc6 libgcc-s1 libstdc++6 zlib1g "
BINS=()
for b in manta manta-head manta-worker manta-executor manta-store; do
    [ -x "$BUILD/bin/$b" ] || die "$BUILD/bin/$b missing: build first"
    BINS+=("$BUILD/bin/$b")
done
[ -f "$BUILD/lib/libmanta.so" ] && BINS+=("$BUILD/lib/libmanta.so")
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)

# The package owning one library path (usrmerge: try both spellings).
owner() {
    local p=$1 real
    real=$(readlink -f "$p")
    for c in "$real" "$p" "${real#/usr}" "/usr$real"; do
        if dpkg -S "$c" >/dev/null 2>&1; then
            dpkg -S "$c" | head -1 | cut -d: -f1
            return 0
        fi
    done
    die "no package owns $p"
}

libs=$(for b in "${BINS[@]}"; do ldd "$b"; done |
       awk '/=> \//{print $3}' | sort -u)
if for b in "${BINS[@]}"; do ldd "$b"; done | grep -q "not found"; then
    die "a binary has unresolved libraries here; fix the build first"
fi
pkgs=$(for l in $libs; do owner "$l"; done | sort -u)
want=()
for p in $pkgs; do
    case "$BASE_PKGS" in *" $p "*) continue ;; esac
    case "$p" in libmanta*|"") continue ;; esac
    want+=("$p")
done
echo "fetch-runtime-debs: packages: ${want[*]}"
(cd "$DIR" && apt-get download "${want[@]}" >/dev/null) ||
    die "apt-get download failed"

# Proof: unpack into a scratch root next to copies of the base libraries
# only, and check that the loader resolves every library from there.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$DIR"/*.deb; do dpkg -x "$f" "$tmp/root"; done
mkdir -p "$tmp/base"
for l in $libs; do
    case "$(owner "$l")" in
    libc6|libgcc-s1|libstdc++6|zlib1g) cp -L "$l" "$tmp/base/" ;;
    esac
done
carried="$tmp/root/usr/lib/x86_64-linux-gnu:$tmp/root/lib/x86_64-linux-gnu"
loader=$(ls /lib64/ld-linux-x86-64.so.2)
bad=0
for b in "${BINS[@]}"; do
    out=$("$loader" --inhibit-cache --library-path "$carried:$tmp/base" \
          --list "$b" 2>&1) || { echo "$out"; bad=1; continue; }
    while read -r name arrow path _; do
        [ "$arrow" = "=>" ] || continue
        case "$path" in
        "$tmp"/*) ;;
        *) echo "fetch-runtime-debs: $b: $name resolved outside the" \
                "carried set: $path"; bad=1 ;;
        esac
    done <<< "$out"
done
[ $bad -eq 0 ] || die "the carried set is incomplete"
echo "fetch-runtime-debs: $(ls "$DIR"/*.deb | wc -l) packages in $DIR;" \
     "every library of ${#BINS[@]} binaries resolves from them plus the base"
