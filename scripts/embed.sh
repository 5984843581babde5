#!/bin/sh
# Turns a file into a C array of its bytes and a closing NUL, so that
# sizeof(NAME) - 1 is the file's length: embed.sh NAME FILE > out.inc.
# Character constants, not one string literal: C11 promises string literals
# of 4095 characters only, and the OpenAPI document is over 100 KB.
set -eu
printf 'static const char %s[] = {\n' "$1"
od -An -v -tx1 "$2" | sed -e "s/ \([0-9a-f][0-9a-f]\)/'\\\\x\1', /g" -e 's/^/    /' -e 's/ *$//'
printf "    '\\\\0'};\n"
