#!/bin/bash
# agentshopctl setup as root (scripts/test.sh runs this only as root): the
# database's directory given to the user, the signing secret root's own, the
# schema created, and a second run keeping all of it. Prints
# "setup: N passed, M failed".
set -u
ctl=${1:-bin/agentshopctl}
pass=0
fail=0
check() { # check NAME COMMAND...
    if "${@:2}"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "setup: FAILED: $1" >&2; fi
}
# What the JSON says: created (1 or 0) of the directory and the secret, and
# the schema's action (perl's JSON::PP: no jq needed).
said() {
    perl -MJSON::PP -e 'my $j = decode_json(join "", <STDIN>);
        print join(",", map({ $_ ? 1 : 0 } $j->{directory}{created}, $j->{signing_key}{created}),
                   $j->{schema}{action})'
}
tmp=$(mktemp -d /tmp/agentshop-setup.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
db=$tmp/state/agentshop/shop.db
key=$tmp/signing.key
user=www-data
id "$user" >/dev/null 2>&1 || user=nobody

out=$("$ctl" --params "$db" setup --user "$user" --signing-key "$key")
check "first setup succeeds" test $? -eq 0
check "the directory is made, the user's, 0750" \
    test "$(stat -c '%U %a' "$tmp/state/agentshop")" = "$user 750"
check "the database is the user's" test "$(stat -c '%U' "$db")" = "$user"
check "the secret is root's, 0600" test "$(stat -c '%U %a' "$key")" = "root 600"
check "the secret is 64 hex characters" grep -Eqx '[0-9a-f]{64}' "$key"
check "the JSON says what was created" \
    test "$(said <<<"$out")" = 1,1,created
check "the schema is there" test "$(sqlite3 "$db" 'SELECT COUNT(*) FROM schema_version')" = 1
secret=$(cat "$key")

out=$("$ctl" --params "$db" setup --user "$user" --signing-key "$key")
check "a second setup succeeds" test $? -eq 0
check "... keeping everything" \
    test "$(said <<<"$out")" = 0,0,current
check "... the secret unchanged" test "$(cat "$key")" = "$secret"

: >"$tmp/empty.key"
out=$("$ctl" --params "$db" setup --user "$user" --signing-key "$tmp/empty.key")
check "an empty secret file is filled" grep -Eqx '[0-9a-f]{64}' "$tmp/empty.key"

err=$("$ctl" --params "$tmp/other/shop.db" setup --user no-such-user-here 2>&1 >/dev/null)
check "an unknown user is refused" test $? -ne 0
check "... by name" grep -q "no user 'no-such-user-here'" <<<"$err"
check "... creating nothing" test ! -e "$tmp/other"

# init --demo as root reads the demo files before it becomes the database's
# owner, who may not reach them (make run from a checkout under /root).
install -d -m 0700 "$tmp/closed"
cp -R "$(dirname "$ctl")/../sql/demo" "$tmp/closed/demo"
out=$("$ctl" --params "$db" --data "$tmp/closed/demo" init --demo)
products=$(grep -c '^{"type":"product"' "$tmp/closed/demo/catalogue.jsonl")
check "init --demo as root loads files only root can read" \
    test "$(perl -MJSON::PP -e 'print decode_json(join "", <STDIN>)->{catalogue}{products}' <<<"$out")" = "$products"
check "... into a database that stays the user's" test "$(stat -c '%U' "$db")" = "$user"

# catalogue import and export as root: the file only root may read or
# write, the database the user's all along.
cp "$tmp/closed/demo/catalogue.jsonl" "$tmp/closed/feed.jsonl"
out=$("$ctl" --params "$db" catalogue import "$tmp/closed/feed.jsonl")
check "catalogue import as root reads a file only root can read" grep -q '"unchanged": ' <<<"$out"
"$ctl" --params "$db" catalogue export "$tmp/closed/export.jsonl" >/dev/null
check "catalogue export as root writes where only root may" cmp -s "$tmp/closed/export.jsonl" "$tmp/closed/feed.jsonl"
check "... and the database stays the user's" test "$(stat -c '%U' "$db")" = "$user"

echo "setup: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
