#!/bin/sh
# Installs the Debian packages the fuzz harnesses need that are missing
# (scripts/deps.sh's "fuzz" set: clang, libFuzzer and the sanitizer runtimes,
# the libraries core links).
# usage: t/fuzz/deps.sh
exec "$(dirname "$0")/../../scripts/deps.sh" fuzz
