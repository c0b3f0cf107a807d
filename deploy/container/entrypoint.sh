#!/bin/sh
# entrypoint.sh -- the image's ENTRYPOINT (Containerfile):
#   head ARGS     manta-head ARGS, in the foreground (logs to stderr)
#   worker ARGS   manta-worker ARGS, likewise
#   --help        this text
#   anything else is run as given (manta status ..., sh, python3 ...)
# The daemon replaces this shell, so `docker stop`'s SIGTERM reaches it:
# the head drains its calls, the worker stops its tasks and unregisters.
set -e
case "${1:-}" in
head)   shift; exec manta-head "$@" ;;
worker) shift; exec manta-worker "$@" ;;
""|--help|-h)
    sed -n '2,6s/^# \{0,1\}//p' "$0"
    exit 0 ;;
*)      exec "$@" ;;
esac
