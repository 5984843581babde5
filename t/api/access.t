# Access control (OWASP API1 BOLA, API3 BOPLA): another user's orders, quotes,
# mandates, returns and confirmations are answered 404 (403 MANDATE_INVALID for
# a mandate, 404 CONFIRMATION_INVALID for a link) exactly as if they did not
# exist, and nothing changes in the database; no body field lets a caller set
# what only the service decides (prices, status, owner, refund, fit); a
# revoked key stops working on the very next request. docs/buying.md,
# docs/orders.md.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use AgentShop::Test;
use JSON::PP ();

my $reason = 'Access-control test order, best-ranked verified offer.';
my $n = 0;
sub ikey { "acc-$$-" . ++$n }

# Alice owns the resources; Mallory is another user with a valid key and a
# valid mandate of her own, so her refusals can only come from ownership.
my ($alice, $akey, $akey_id) = new_agent();
my ($mallory, $mkey) = new_agent();
my ($A, $M) = (agent_headers($akey), agent_headers($mkey));

my ($p, $off) = buyable_offer(min_stock => 12, max_cents => 3000);
ok($p, "an offer with stock ($off->{offer_id}, $off->{stock} units)") or BAIL_OUT('no offer to buy');
my $P = $off->{price_cents};
my $eur = sub { sprintf '%.2f', $_[0] / 100 };
# One unit is placed at once (exactly the threshold), two units wait for a human.
my $amd = new_mandate($alice, per_order => 1000, monthly => 5000, confirm_above => $eur->($P));
my $mmd = new_mandate($mallory, per_order => 1000, monthly => 5000, confirm_above => $eur->($P));

sub quote_for {
    my ($H, $qty) = @_;
    my ($res, $q) = post_json('/quotes', $H, { sku => $p->{sku}, offer_id => $off->{offer_id}, quantity => $qty // 1 });
    die 'quote failed: ' . $res->content unless $res->code == 201;
    return $q;
}

sub order_for {
    my ($key, $qty) = @_;
    my $q = quote_for(agent_headers($key), $qty);
    my ($res, $v) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => ikey()),
                              { quote_id => $q->{id}, reason => $reason });
    die 'order failed: ' . $res->content unless $res->code == 201 || $res->code == 202;
    return $v;
}

sub link_of {
    my ($c) = @_;
    my ($path, $token) = $c->{confirmation}{url} =~ m{/v1(/confirmations/[^?]+)\?token=([A-Za-z0-9_-]+)$};
    return ($path, $token);
}

sub one { my ($r) = sql($_[0]); return $r ? $r->[0] : undef }

# What an attack must not change: the order's status, timeline, confirmation,
# returns and stock, the owner's budget (service view and database), and the
# totals of the tables an attack could write to.
sub facts {
    my (@ids) = @_;
    my %f;
    for my $id (@ids) {
        my ($o) = sql("SELECT status, budget_cents, updated_at, offer_id FROM orders WHERE id = '$id'");
        $f{$id} = {
            status       => $o->[0],
            budget_cents => $o->[1],
            updated_at   => $o->[2],
            stock        => one("SELECT stock FROM offers WHERE id = '$o->[3]'"),
            timeline     => join(',', map { "$_->[0]:$_->[1]" } sql("SELECT seq, status FROM order_events WHERE order_id = '$id' ORDER BY seq")),
            confirmation => one("SELECT status || '/' || COALESCE(CAST(decided_at AS TEXT), '-') FROM confirmations WHERE order_id = '$id'") // 'none',
            returns      => one("SELECT COUNT(*) FROM returns WHERE order_id = '$id'"),
        };
    }
    $f{alice_spent_api} = (api_get('/mandates/current', $A))[1]{spent_this_month_cents};
    $f{alice_spent_db} = one("SELECT COALESCE(SUM(budget_cents), 0) FROM orders WHERE mandate_id = '$amd->{id}'");
    $f{mallory_spent_db} = one("SELECT COALESCE(SUM(budget_cents), 0) FROM orders WHERE mandate_id = '$mmd->{id}'");
    $f{tables} = join ' ', map { "$_=" . one("SELECT COUNT(*) FROM $_") } qw(orders order_events confirmations returns questions);
    $f{stock_total} = one('SELECT SUM(stock) FROM offers');
    return \%f;
}

# A 404 for another user's id must be the 404 an unknown id gets.
sub same_as_unknown {
    my ($got, $unknown, $real_id, $fake_id, $name) = @_;
    (my $msg = $unknown->{message} // '') =~ s/\Q$fake_id\E/$real_id/g;
    is_deeply([ @$got{qw(error field)}, $got->{message} ], [ @$unknown{qw(error field)}, $msg ],
              "$name: the same answer as for an id that does not exist");
}

sub no_leak {
    my ($res, $name) = @_;
    unlike($res->content, qr/\Q$alice\E|\Q$p->{sku}\E|\Q$amd->{id}\E|\Q$reason\E/,
           "$name: the refusal shows nothing of Alice's (user, item, mandate, reason)");
}

# Alice's resources.
my $placed = order_for($akey, 1);
is($placed->{status}, 'placed', "Alice's placed order $placed->{id}");
my $waiting = order_for($akey, 2);
is($waiting->{order}{status}, 'awaiting_confirmation', "Alice's order awaiting confirmation $waiting->{order_id}");
my ($apath, $atoken) = link_of($waiting);
my $waiting2 = order_for($akey, 2);
my ($apath2, $atoken2) = link_of($waiting2);
my $shipped = order_for($akey, 1);
ctl('order', 'ship', $shipped->{id});
is(one("SELECT status FROM orders WHERE id = '$shipped->{id}'"), 'shipped', "Alice's shipped order $shipped->{id}");
my @alice_orders = ($placed->{id}, $waiting->{order_id}, $waiting2->{order_id}, $shipped->{id});
# Mallory's own waiting order, whose link she legitimately holds.
my $mwait = order_for($mkey, 2);
my ($mpath, $mtoken) = link_of($mwait);
ok($apath && $atoken && $apath2 && $mpath && $mtoken, 'three signed links') or BAIL_OUT('no confirmation links');

my ($res, $v, $u, $before);

# ---- GET /orders/{id} ----
($res, $v) = api_get("/orders/$placed->{id}", $A);
is($res->code, 200, 'Alice reads her order (control)');
($res, $u) = api_get('/orders/ord_nosuchorder0000000', $M);
for my $id (@alice_orders) {
    ($res, $v) = api_get("/orders/$id", $M);
    is_json_error($res, $v, 404, 'NOT_FOUND', "GET /orders/$id by another user: 404 NOT_FOUND");
    same_as_unknown($v, $u, $id, 'ord_nosuchorder0000000', '... ');
    no_leak($res, '... ');
}

# ---- POST /orders/{id}/cancel ----
$before = facts(@alice_orders);
($res, $u) = post_json('/orders/ord_nosuchorder0000000/cancel', $M, '');
for my $id (@alice_orders) {
    ($res, $v) = post_json("/orders/$id/cancel", $M, '');
    is_json_error($res, $v, 404, 'NOT_FOUND', "cancel of Alice's $id by another user: 404 NOT_FOUND (not 200, not 409)");
    same_as_unknown($v, $u, $id, 'ord_nosuchorder0000000', '... ');
    no_leak($res, '... ');
}
is_deeply(facts(@alice_orders), $before, '... nothing changed: status, timeline, confirmation, stock, budget');

# ---- POST /orders with another user's quote, or another user's mandate ----
my $aq = quote_for($A, 1);
$before = facts(@alice_orders);
($res, $u) = post_json('/orders', agent_headers($mkey, 'Idempotency-Key' => ikey()), { quote_id => 'q_nosuchquote000000', reason => $reason });
($res, $v) = post_json('/orders', agent_headers($mkey, 'Idempotency-Key' => ikey()), { quote_id => $aq->{id}, reason => $reason });
is_json_error($res, $v, 404, 'NOT_FOUND', "an order from Alice's quote by another user: 404 NOT_FOUND");
same_as_unknown($v, $u, $aq->{id}, 'q_nosuchquote000000', '... ');
no_leak($res, '... ');
($res, $v) = post_json('/orders', agent_headers($mkey, 'Idempotency-Key' => ikey()),
                       { quote_id => $aq->{id}, reason => $reason, mandate_id => $amd->{id} });
is_json_error($res, $v, 404, 'NOT_FOUND', "... also naming Alice's mandate: 404 NOT_FOUND");
($res, $v) = post_json('/orders', agent_headers($mkey, 'Idempotency-Key' => ikey()),
                       { quote_id => $aq->{id}, reason => $reason, mandate_id => $mmd->{id} });
is_json_error($res, $v, 404, 'NOT_FOUND', "... also naming her own mandate: 404 NOT_FOUND");
is(scalar sql("SELECT id FROM orders WHERE quote_id = '$aq->{id}'"), 0, '... no order was made from the quote');
is_deeply(facts(@alice_orders), $before, '... nothing changed: stock, budgets, tables');

my $mq = quote_for($M, 1);
$before = facts(@alice_orders);
($res, $v) = post_json('/orders', agent_headers($mkey, 'Idempotency-Key' => ikey()),
                       { quote_id => $mq->{id}, reason => $reason, mandate_id => $amd->{id} });
is_json_error($res, $v, 403, 'MANDATE_INVALID', "Mallory's own quote against Alice's mandate: 403 MANDATE_INVALID");
is($v->{field}, 'mandate_id', '... naming mandate_id');
($res, $u) = post_json('/orders', agent_headers($mkey, 'Idempotency-Key' => ikey()),
                       { quote_id => $mq->{id}, reason => $reason, mandate_id => 'mdt_nosuchmandate000' });
same_as_unknown($v, $u, $amd->{id}, 'mdt_nosuchmandate000', '... ');
unlike(json_encode($v), qr/\Q$alice\E|\Q$p->{sku}\E|per_order|monthly|remaining/, '... and says nothing of its owner or limits');
is(scalar sql("SELECT id FROM orders WHERE quote_id = '$mq->{id}'"), 0, '... no order');
is_deeply(facts(@alice_orders), $before, "... nothing changed: Alice's budget, stock, tables");
($res, $v) = post_json('/orders', agent_headers($mkey, 'Idempotency-Key' => ikey()), { quote_id => $mq->{id}, reason => $reason });
is($res->code, 201, '... while the same quote orders fine against her own mandate (control)');
is($v->{mandate_id}, $mmd->{id}, '... charged to her mandate');
($res, $v) = post_json('/orders', agent_headers($akey, 'Idempotency-Key' => ikey()), { quote_id => $aq->{id}, reason => $reason });
is($res->code, 201, "Alice's quote is still hers to order (control)");
is($v->{mandate_id}, $amd->{id}, '... against her mandate');
push @alice_orders, $v->{id};
my $mine_placed = $v->{id};

# ---- POST /returns with another user's order ----
$before = facts(@alice_orders);
($res, $u) = post_json('/returns', agent_headers($mkey, 'Idempotency-Key' => ikey()), { order_id => 'ord_nosuchorder0000000', reason_code => 'does_not_fit' });
for my $id ($shipped->{id}, $placed->{id}, $waiting->{order_id}) {
    ($res, $v) = post_json('/returns', agent_headers($mkey, 'Idempotency-Key' => ikey()),
                           { order_id => $id, reason_code => 'does_not_fit', note => 'Not mine, but let us try.' });
    is_json_error($res, $v, 404, 'NOT_FOUND', "a return of Alice's $id by another user: 404 NOT_FOUND (not 201, not 409)");
    same_as_unknown($v, $u, $id, 'ord_nosuchorder0000000', '... ');
    no_leak($res, '... ');
}
is_deeply(facts(@alice_orders), $before, '... nothing changed: no return, status, stock, budget');

# ---- confirmations: one link's id with another link's token ----
$before = facts(@alice_orders);
my ($aid) = $apath =~ m{/confirmations/(.+)$};
my %foreign = ("Mallory's token" => $mtoken, "the token of Alice's other order" => $atoken2);
for my $what (sort keys %foreign) {
    my $t = $foreign{$what};
    ($res, $v) = api_get("$apath?token=$t", $M);
    is_json_error($res, $v, 404, 'CONFIRMATION_INVALID', "GET Alice's confirmation with $what: 404 CONFIRMATION_INVALID");
    no_leak($res, '... ');
    ($res) = api('GET', "$apath?token=$t", [ Accept => 'text/html' ]);
    is($res->code, 404, '... also as a page');
    unlike($res->content, qr/\Q$reason\E|\Q$alice\E/, '... which shows nothing of the order');
    for my $d (qw(approve decline)) {
        ($res, $v) = post_json($apath, [ 'Content-Type' => 'application/json' ], { decision => $d, token => $t });
        is_json_error($res, $v, 404, 'CONFIRMATION_INVALID', "POST $d on Alice's confirmation with $what: 404");
        ($res, $v) = api('POST', "$apath?token=$t", [ 'Content-Type' => 'application/x-www-form-urlencoded' ], "decision=$d");
        is_json_error($res, $v, 404, 'CONFIRMATION_INVALID', "... and through the form, token in the link: 404");
        ($res) = api('POST', $apath, [ 'Content-Type' => 'application/x-www-form-urlencoded', Accept => 'text/html' ], "decision=$d&token=$t");
        is($res->code, 404, '... and through the form, token in the body: 404');
    }
}
# The other direction: Alice's token on Mallory's confirmation id.
($res, $v) = post_json($mpath, [ 'Content-Type' => 'application/json' ], { decision => 'approve', token => $atoken });
is_json_error($res, $v, 404, 'CONFIRMATION_INVALID', "Alice's token on Mallory's confirmation: 404");
is(one("SELECT status FROM confirmations WHERE id = '" . ($mpath =~ m{([^/]+)$})[0] . "'"), 'pending', "... Mallory's confirmation is still pending");
is_deeply(facts(@alice_orders), $before, '... nothing changed: the confirmation and order still wait, stock, budget, timeline');
($res, $v) = api_get("$apath?token=$atoken");
is($res->code, 200, "the link's own token still opens it (control)");
is($v->{status}, 'pending', '... pending');
is($v->{id}, $aid, '... the confirmation of the link');

# ---- GET /mandates/current shows only the caller's ----
($res, $v) = api_get('/mandates/current', $M);
is($res->code, 200, 'GET /mandates/current for Mallory');
is($v->{id}, $mmd->{id}, '... her mandate, not Alice\'s');
is($v->{user}, $mallory, '... her user');
is($v->{spent_this_month_cents}, one("SELECT SUM(budget_cents) FROM orders WHERE mandate_id = '$mmd->{id}'"),
   '... her own spending only');
unlike($res->content, qr/\Q$alice\E|\Q$amd->{id}\E/, '... nothing of Alice\'s');
# Asking for Alice's by query: docs/api.md refuses unknown query parameters
# (400); whatever the answer, it must never be Alice's mandate.
for my $qs ("user=$alice", "mandate_id=$amd->{id}") {
    ($res, $v) = api_get("/mandates/current?$qs", $M);
    is_json_error($res, $v, 400, 'VALIDATION_ERROR', "GET /mandates/current?$qs: 400 (unknown parameter)")
      && is($v->{field}, ($qs =~ /^(\w+)/)[0], '... naming it');
    unlike($res->content, qr/\Q$alice\E|\Q$amd->{id}\E/, "... and never Alice's mandate");
}

# ---- no body field sets what only the service may (mass assignment) ----
my $true = JSON::PP::true;
my ($part, $slug) = live_part();
ok($part, "a part that fits a device ($part->{sku}, $slug)");
my $oq = quote_for($A, 1);
my %endpoint = (
    '/quotes' => [ sub { $A }, { sku => $p->{sku}, offer_id => $off->{offer_id}, quantity => 1 },
                   [ price_cents => 1 ], [ unit_price_cents => 1 ], [ total_cents => 1 ], [ status => 'placed' ],
                   [ user => $mallory ], [ user_id => $mallory ], [ mandate_id => $mmd->{id} ], [ fit_status => 'fits' ],
                   [ right_item_guarantee => $true ], [ stock => 100 ], [ expires_at => '2099-01-01T00:00:00Z' ],
                   [ currency => 'EUR' ], [ merchant => 'x' ] ],
    '/orders' => [ sub { agent_headers($akey, 'Idempotency-Key' => ikey()) }, { quote_id => $oq->{id}, reason => $reason },
                   [ price_cents => 1 ], [ unit_price_cents => 1 ], [ total_cents => 1 ], [ status => 'placed' ],
                   [ user => $mallory ], [ user_id => $mallory ], [ refund_cents => 100 ], [ refund_status => 'refunded' ],
                   [ fit_status => 'fits' ], [ right_item_guarantee => $true ], [ stock => 100 ], [ budget_cents => 0 ],
                   [ agent => 'human/1.0' ], [ confirmation_id => 'conf_x' ], [ quantity => 10 ] ],
    '/returns' => [ sub { agent_headers($akey, 'Idempotency-Key' => ikey()) }, { order_id => $shipped->{id}, reason_code => 'defective' },
                    [ refund_cents => 100000 ], [ refund_status => 'refunded' ], [ status => 'returned' ], [ user => $mallory ],
                    [ user_id => $mallory ], [ right_item_guarantee => $true ], [ fit_status => 'fits' ],
                    [ total_cents => 1 ], [ mandate_id => $mmd->{id} ], [ stock => 100 ] ],
    '/compatibility/check' => [ sub { $A }, { sku => $part->{sku}, device => $slug },
                    [ fit_status => 'does_not_fit' ], [ right_item_guarantee => $true ], [ user => $mallory ],
                    [ user_id => $mallory ], [ status => 'verified' ], [ verification_status => 'verified' ], [ price_cents => 1 ] ],
    '/questions' => [ sub { $A }, { sku => $p->{sku}, question => 'How much is in it?' },
                    [ answer => 'Everything you wished for.' ], [ user => $mallory ], [ user_id => $mallory ],
                    [ status => 'answered' ], [ asked_at => '2020-01-01T00:00:00Z' ], [ fit_status => 'fits' ], [ price_cents => 1 ] ],
    $apath => [ sub { [ 'Content-Type' => 'application/json' ] }, { decision => 'approve', token => $atoken },
                    [ status => 'approved' ], [ user => $mallory ], [ user_id => $mallory ], [ order_id => $placed->{id} ],
                    [ total_cents => 1 ], [ price_cents => 1 ], [ decided_at => '2020-01-01T00:00:00Z' ] ],
);
$before = facts(@alice_orders);
my $quotes0 = one("SELECT COUNT(*) FROM quotes WHERE user_id = '$alice'");
for my $path (sort keys %endpoint) {
    my ($hdr, $base, @extra) = @{ $endpoint{$path} };
    for my $x (@extra) {
        my ($field, $value) = @$x;
        ($res, $v) = post_json($path, $hdr->(), { %$base, $field => $value });
        my $label = $path eq $apath ? 'POST /confirmations/{id}' : "POST $path";
        is_json_error($res, $v, 400, 'VALIDATION_ERROR', "$label with $field: 400 VALIDATION_ERROR")
          && is($v->{field}, $field, "... naming $field");
    }
}
# The form of the confirmation page is checked the same way.
($res, $v) = api('POST', "$apath?token=$atoken", [ 'Content-Type' => 'application/x-www-form-urlencoded' ], 'decision=approve&status=approved');
is_json_error($res, $v, 400, 'VALIDATION_ERROR', 'the confirmation form with status=approved: 400')
  && is($v->{field}, 'status', '... naming status');
is(one("SELECT COUNT(*) FROM quotes WHERE user_id = '$alice'"), $quotes0, 'no refused quote was stored');
is(scalar sql("SELECT id FROM orders WHERE quote_id = '$oq->{id}'"), 0, 'no refused order was made');
is_deeply(facts(@alice_orders), $before, 'nothing changed: no return, no question, the confirmation still waits, stock, budget');

# Controls: the same bodies without the extra field are accepted.
# (Not for /returns: a returned item is not restocked, and the later scripts
# audit stock against the data files; the 404s above are the returns' control.)
for my $path (grep { $_ ne '/returns' } sort keys %endpoint) {
    my ($hdr, $base) = @{ $endpoint{$path} };
    ($res, $v) = post_json($path, $hdr->(), $base);
    my $label = $path eq $apath ? 'POST /confirmations/{id}' : "POST $path";
    ok($res->code >= 200 && $res->code < 300, "$label without the extra field is accepted (control)") or diag $res->content;
    if ($path eq '/orders') {
        is($v->{total_cents}, $oq->{total_cents}, '... at the quoted price');
        is($v->{status}, 'placed', '... placed by the service');
    } elsif ($path eq '/quotes') {
        is($v->{unit_price_cents}, $P, '... at the offer price');
    } elsif ($path eq $apath) {
        is($v->{status}, 'approved', '... approved by the link holder');
    }
}

# ---- a revoked key stops working at once ----
my $k2rec = ctl('key', 'create', '--user', $alice);
my ($k2, $k2_id) = @$k2rec{qw(key id)};
my $K2 = agent_headers($k2);
my $rq = quote_for($K2, 1);
my $rq2 = quote_for($K2, 1);
($res, $v) = post_json('/orders', agent_headers($k2, 'Idempotency-Key' => "rev-$$"), { quote_id => $rq->{id}, reason => $reason });
is($res->code, 201, 'a second key of Alice orders');
my $rorder = $v->{id};
my @warm = concurrently(map { sub { api_get('/mandates/current', $K2) } } 1 .. 8);
is(scalar(grep { $_->{code} == 200 } @warm), 8, '... and reads her mandate from many connections at once');
($res) = api_get('/mandates/current', $K2);
is($res->code, 200, '... and on this keep-alive connection');
ctl('key', 'revoke', $k2_id);
$before = facts(@alice_orders, $rorder);
($res, $v) = api_get('/mandates/current', $K2);
is_json_error($res, $v, 403, 'AGENT_UNIDENTIFIED', 'revoked: the very next request on the same connection is 403');
($res, $v) = api_get("/orders/$rorder", $K2);
is_json_error($res, $v, 403, 'AGENT_UNIDENTIFIED', '... reading its own order: 403');
($res, $v) = post_json('/quotes', $K2, { sku => $p->{sku} });
is_json_error($res, $v, 403, 'AGENT_UNIDENTIFIED', '... quoting: 403');
($res, $v) = post_json('/orders', agent_headers($k2, 'Idempotency-Key' => "rev2-$$"), { quote_id => $rq2->{id}, reason => $reason });
is_json_error($res, $v, 403, 'AGENT_UNIDENTIFIED', '... ordering: 403');
($res, $v) = post_json('/orders', agent_headers($k2, 'Idempotency-Key' => "rev-$$"), { quote_id => $rq->{id}, reason => $reason });
is_json_error($res, $v, 403, 'AGENT_UNIDENTIFIED', '... a retry of an earlier order does not replay it');
unlike($res->content, qr/\Q$rorder\E/, '... nor show it');
($res, $v) = post_json("/orders/$rorder/cancel", $K2, '');
is_json_error($res, $v, 403, 'AGENT_UNIDENTIFIED', '... cancelling: 403');
my @after = concurrently(map { my $i = $_; sub { $i % 2 ? api_get('/mandates/current', $K2) : post_json('/quotes', $K2, { sku => $p->{sku} }) } } 1 .. 12);
is(scalar(grep { $_->{code} == 403 && $_->{body}{error} eq 'AGENT_UNIDENTIFIED' } @after), 12,
   '... and 403 in every child process at once');
is(scalar sql("SELECT id FROM orders WHERE quote_id = '$rq2->{id}'"), 0, '... no order was made');
is_deeply(facts(@alice_orders, $rorder), $before, '... nothing changed');
($res, $v) = api_get('/mandates/current', $A);
is($res->code, 200, "Alice's other key still works (revocation is per key)");

done_testing();
