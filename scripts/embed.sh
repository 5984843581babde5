#!/bin/sh
# Turns a text file into a C string constant: embed.sh NAME FILE > out.inc
set -eu
printf 'static const char %s[] =\n' "$1"
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$/\\n"/' "$2"
printf '    ;\n'
