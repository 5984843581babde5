#!/bin/sh
# Fails unless the shared object exports exactly the names given (its defined
# dynamic symbols, nm -D): a module that exports more may clash with a name of
# another module or library loaded into httpd.
# usage: scripts/check-exports.sh FILE NAME...
set -eu
so=$1
shift
want=$(printf '%s\n' "$@" | sort)
got=$(nm -D --defined-only "$so" | awk '{ print $NF }' | sort)
if [ "$got" != "$want" ]; then
    echo "check-exports: $so must export only: $*" >&2
    echo "$got" | grep -vxF "$want" | grep . | sed 's/^/  also exported: /' >&2 || true
    echo "$want" | grep -vxF "$got" | grep . | sed 's/^/  missing: /' >&2 || true
    echo "  (make the function static, or hidden when other glue files call it)" >&2
    exit 1
fi
