#!/bin/sh
# install-deps.sh -- install the Debian 12 packages Manta builds, tests and
# demos with. Installs only what is missing, so a second run costs nothing.
# Needs root (or sudo) when something is missing.
#   install-deps.sh           what `make test` needs
#   install-deps.sh --bench   that plus the bench-only peers (python3-distributed
#                             for bench/peers/, `make bench-peers`); never
#                             needed by the build or the tests
set -eu

BENCH_PKGS="python3-distributed"

PKGS="build-essential cmake pkg-config git ca-certificates procps iproute2 \
libgrpc-dev libprotobuf-c-dev protobuf-c-compiler libuv1-dev libhiredis-dev \
libcunit1-dev libssl-dev openssl redis-server valgrind clang libclang-rt-14-dev \
python3 python3-grpcio python3-protobuf protobuf-compiler protobuf-compiler-grpc \
python3-numpy python3-torch"
# Test dependency: promtool and prometheus check and scrape /metrics
# (tests/integration/test_metrics.py).
PKGS="$PKGS prometheus"
# Test only: it_dashboard_browser drives the dashboard in headless chromium.
PKGS="$PKGS chromium"
# Test only: it_systemd checks deploy/systemd/ with systemd-analyze verify.
PKGS="$PKGS systemd"
# `make package`: dpkg-shlibdeps and file (CPack finds the ELF files whose
# libraries make the Depends of the .deb with them). Test only: it_package
# checks deploy/container/compose.yaml and it_k8s renders deploy/k8s/ with
# `kubectl kustomize`, both parsing YAML with python3-yaml; Debian's kubectl
# (kubernetes-client, 1.20) only where no kubectl is on PATH: a newer one
# from elsewhere (Google Cloud SDK, upstream) is kept.
PKGS="$PKGS dpkg-dev file python3-yaml"
if ! command -v kubectl >/dev/null 2>&1; then
    PKGS="$PKGS kubernetes-client"
fi

for arg in "$@"; do
    case "$arg" in
    --bench) PKGS="$PKGS $BENCH_PKGS" ;;
    *) echo "usage: install-deps.sh [--bench]" >&2; exit 2 ;;
    esac
done

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $p"
    fi
done

if [ -z "$missing" ]; then
    exit 0
fi

echo "install-deps: installing:$missing"
SUDO=""
if [ "$(id -u)" != 0 ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "install-deps: done"
