# Sourced by the scripts that check a served shop from the host (test-fresh.sh,
# test-deb.sh): an HTTP exchange with curl, reading its JSON with Perl's
# JSON::PP, and an agent's purchase. The caller defines check NAME CMD... and
# $work, a directory for the bodies.

# An HTTP exchange from the host (the root shares its loopback):
# http METHOD URL [BODY [HEADER...]] prints the status on the first line, then the body.
http() {
    local method=$1 url=$2 body=${3:-}
    shift 3 2>/dev/null || shift $#
    local args=(-s -o "$work/body" -w '%{http_code}' -X "$method")
    [ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data "$body")
    local h
    for h in "$@"; do args+=(-H "$h"); done
    curl "${args[@]}" "$url" >"$work/status" 2>/dev/null || echo 000 >"$work/status"
    cat "$work/status"
    echo
    cat "$work/body"
}
# json EXPR: EXPR (Perl, over $j, the decoded body after the status line) printed.
json() { sed 1d | E=$1 perl -MJSON::PP -0777 -ne 'my $j = eval { decode_json($_) }; print eval($ENV{E}) // ""'; }

# shop LABEL BASE KEY: search, quote, order and read the order back, as an
# agent; SHOP_ORDER is the order's id afterwards.
shop() {
    local who=$1 B=$2 key=$3 sku quote order status
    local A=("Authorization: Bearer $key" "Service-Agent: test-fresh/1.0")
    http GET "$B/search?q=hand+soap&limit=3" >"$work/search"
    check "$who: search answers 200" test "$(head -n 1 "$work/search")" = 200
    local enc
    enc=$(curl -s -D - -o /dev/null -H 'Accept-Encoding: gzip' "$B/search?q=hand+soap&limit=3" |
        tr -d '\r' | awk 'tolower($1) == "content-encoding:" { print $2 }')
    check "$who: search is compressed for a client that takes gzip (the sample configuration)" test "$enc" = gzip
    sku=$(json '(map { $_->{sku} } grep { $_->{best_offer} } @{$j->{results}})[0]' <"$work/search")
    check "$who: search finds hand soap to buy" test -n "$sku"

    http POST "$B/quotes" "{\"sku\":\"$sku\",\"quantity\":1}" "${A[@]}" >"$work/quote"
    check "$who: quote answers 201" test "$(head -n 1 "$work/quote")" = 201
    quote=$(json '$j->{id}' <"$work/quote")

    http POST "$B/orders" "{\"quote_id\":\"$quote\",\"reason\":\"test-fresh buys the cheapest verified soap\"}" \
        "${A[@]}" "Idempotency-Key: $(cat /proc/sys/kernel/random/uuid)" >"$work/order"
    check "$who: order answers 201" test "$(head -n 1 "$work/order")" = 201
    order=$(json '$j->{id}' <"$work/order")
    status=$(json '$j->{status}' <"$work/order")
    check "$who: the order is placed" test "$status" = placed

    http GET "$B/orders/$order" "" "${A[@]}" >"$work/read"
    check "$who: the order reads back" test -n "$order" -a "$(json '$j->{id}' <"$work/read")" = "$order"
    SHOP_ORDER=$order
}
