# Access control (OWASP API1 BOLA): another user's orders, quotes, mandates,
# returns and confirmations are answered 404 (403 MANDATE_INVALID for a
# mandate, 404 CONFIRMATION_INVALID for a link) exactly as if they did not
# exist, and nothing changes in the database. docs/buying.md, docs/orders.md.
# Each scenario below stands alone: its own requests, its own responses.
# No body field setting what only the service decides: access_fields.t; a
# revoked key: access_revoke.t.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use AgentShop::Test;
use AgentShop::Access;

meet();

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
ok($apath && $atoken && $apath2 && $mpath && $mtoken, 'three signed links') or die "no confirmation links\n";

# ---- GET /orders/{id} ----
{
    my ($res) = api_get("/orders/$placed->{id}", $A);
    is($res->code, 200, 'Alice reads her order (control)');
}
{
    my (undef, $unknown) = api_get('/orders/ord_nosuchorder0000000', $M);
    for my $id (@alice_orders) {
        my ($res, $v) = api_get("/orders/$id", $M);
        is_json_error($res, $v, 404, 'NOT_FOUND', "GET /orders/$id by another user: 404 NOT_FOUND");
        same_as_unknown($v, $unknown, $id, 'ord_nosuchorder0000000', '... ');
        no_leak($res, '... ');
    }
}

# ---- POST /orders/{id}/cancel ----
{
    my $before = facts(@alice_orders);
    my (undef, $unknown) = post_json('/orders/ord_nosuchorder0000000/cancel', $M, '');
    for my $id (@alice_orders) {
        my ($res, $v) = post_json("/orders/$id/cancel", $M, '');
        is_json_error($res, $v, 404, 'NOT_FOUND', "cancel of Alice's $id by another user: 404 NOT_FOUND (not 200, not 409)");
        same_as_unknown($v, $unknown, $id, 'ord_nosuchorder0000000', '... ');
        no_leak($res, '... ');
    }
    is_deeply(facts(@alice_orders), $before, '... nothing changed: status, timeline, confirmation, stock, budget');
}

# ---- POST /orders with another user's quote, or another user's mandate ----
{
    my $aq = quote_for($A, 1);
    my $before = facts(@alice_orders);
    my $mallory_orders = sub { post_json('/orders', agent_headers($mkey, 'Idempotency-Key' => ikey()), { @_ }) };
    my (undef, $unknown) = $mallory_orders->(quote_id => 'q_nosuchquote000000', reason => $REASON);
    {
        my ($res, $v) = $mallory_orders->(quote_id => $aq->{id}, reason => $REASON);
        is_json_error($res, $v, 404, 'NOT_FOUND', "an order from Alice's quote by another user: 404 NOT_FOUND");
        same_as_unknown($v, $unknown, $aq->{id}, 'q_nosuchquote000000', '... ');
        no_leak($res, '... ');
    }
    {
        my ($res, $v) = $mallory_orders->(quote_id => $aq->{id}, reason => $REASON, mandate_id => $amd->{id});
        is_json_error($res, $v, 404, 'NOT_FOUND', "... also naming Alice's mandate: 404 NOT_FOUND");
    }
    {
        my ($res, $v) = $mallory_orders->(quote_id => $aq->{id}, reason => $REASON, mandate_id => $mmd->{id});
        is_json_error($res, $v, 404, 'NOT_FOUND', "... also naming her own mandate: 404 NOT_FOUND");
    }
    is(scalar sql("SELECT id FROM orders WHERE quote_id = '$aq->{id}'"), 0, '... no order was made from the quote');
    is_deeply(facts(@alice_orders), $before, '... nothing changed: stock, budgets, tables');

    my $mq = quote_for($M, 1);
    $before = facts(@alice_orders);
    {
        my ($res, $v) = $mallory_orders->(quote_id => $mq->{id}, reason => $REASON, mandate_id => $amd->{id});
        is_json_error($res, $v, 403, 'MANDATE_INVALID', "Mallory's own quote against Alice's mandate: 403 MANDATE_INVALID");
        is($v->{field}, 'mandate_id', '... naming mandate_id');
        my (undef, $unknown_mandate) = $mallory_orders->(quote_id => $mq->{id}, reason => $REASON,
                                                         mandate_id => 'mdt_nosuchmandate000');
        same_as_unknown($v, $unknown_mandate, $amd->{id}, 'mdt_nosuchmandate000', '... ');
        unlike(json_encode($v), qr/\Q$alice\E|\Q$p->{sku}\E|per_order|monthly|remaining/, '... and says nothing of its owner or limits');
    }
    is(scalar sql("SELECT id FROM orders WHERE quote_id = '$mq->{id}'"), 0, '... no order');
    is_deeply(facts(@alice_orders), $before, "... nothing changed: Alice's budget, stock, tables");
    {
        my ($res, $v) = $mallory_orders->(quote_id => $mq->{id}, reason => $REASON);
        is($res->code, 201, '... while the same quote orders fine against her own mandate (control)');
        is($v->{mandate_id}, $mmd->{id}, '... charged to her mandate');
    }
    {
        my ($res, $v) = post_json('/orders', agent_headers($akey, 'Idempotency-Key' => ikey()),
                                  { quote_id => $aq->{id}, reason => $REASON });
        is($res->code, 201, "Alice's quote is still hers to order (control)");
        is($v->{mandate_id}, $amd->{id}, '... against her mandate');
        push @alice_orders, $v->{id};
    }
}

# ---- POST /returns with another user's order ----
{
    my $before = facts(@alice_orders);
    my (undef, $unknown) = post_json('/returns', agent_headers($mkey, 'Idempotency-Key' => ikey()),
                                     { order_id => 'ord_nosuchorder0000000', reason_code => 'does_not_fit' });
    for my $id ($shipped->{id}, $placed->{id}, $waiting->{order_id}) {
        my ($res, $v) = post_json('/returns', agent_headers($mkey, 'Idempotency-Key' => ikey()),
                                  { order_id => $id, reason_code => 'does_not_fit', note => 'Not mine, but let us try.' });
        is_json_error($res, $v, 404, 'NOT_FOUND', "a return of Alice's $id by another user: 404 NOT_FOUND (not 201, not 409)");
        same_as_unknown($v, $unknown, $id, 'ord_nosuchorder0000000', '... ');
        no_leak($res, '... ');
    }
    is_deeply(facts(@alice_orders), $before, '... nothing changed: no return, status, stock, budget');
}

# ---- confirmations: one link's id with another link's token ----
{
    my $before = facts(@alice_orders);
    my ($aid) = $apath =~ m{/confirmations/(.+)$};
    my %foreign = ("Mallory's token" => $mtoken, "the token of Alice's other order" => $atoken2);
    for my $what (sort keys %foreign) {
        my $t = $foreign{$what};
        {
            my ($res, $v) = api_get("$apath?token=$t", $M);
            is_json_error($res, $v, 404, 'CONFIRMATION_INVALID', "GET Alice's confirmation with $what: 404 CONFIRMATION_INVALID");
            no_leak($res, '... ');
        }
        {
            my ($res) = api('GET', "$apath?token=$t", [ Accept => 'text/html' ]);
            is($res->code, 404, '... also as a page');
            unlike($res->content, qr/\Q$REASON\E|\Q$alice\E/, '... which shows nothing of the order');
        }
        for my $d (qw(approve decline)) {
            {
                my ($res, $v) = post_json($apath, [ 'Content-Type' => 'application/json' ], { decision => $d, token => $t });
                is_json_error($res, $v, 404, 'CONFIRMATION_INVALID', "POST $d on Alice's confirmation with $what: 404");
            }
            {
                my ($res, $v) = api('POST', "$apath?token=$t", [ 'Content-Type' => 'application/x-www-form-urlencoded' ], "decision=$d");
                is_json_error($res, $v, 404, 'CONFIRMATION_INVALID', "... and through the form, token in the link: 404");
            }
            {
                my ($res) = api('POST', $apath, [ 'Content-Type' => 'application/x-www-form-urlencoded', Accept => 'text/html' ],
                                "decision=$d&token=$t");
                is($res->code, 404, '... and through the form, token in the body: 404');
            }
        }
    }
    # The other direction: Alice's token on Mallory's confirmation id.
    {
        my ($res, $v) = post_json($mpath, [ 'Content-Type' => 'application/json' ], { decision => 'approve', token => $atoken });
        is_json_error($res, $v, 404, 'CONFIRMATION_INVALID', "Alice's token on Mallory's confirmation: 404");
    }
    is(one("SELECT status FROM confirmations WHERE id = '" . ($mpath =~ m{([^/]+)$})[0] . "'"), 'pending', "... Mallory's confirmation is still pending");
    is_deeply(facts(@alice_orders), $before, '... nothing changed: the confirmation and order still wait, stock, budget, timeline');
    {
        my ($res, $v) = api_get("$apath?token=$atoken");
        is($res->code, 200, "the link's own token still opens it (control)");
        is($v->{status}, 'pending', '... pending');
        is($v->{id}, $aid, '... the confirmation of the link');
    }
}

# ---- GET /mandates/current shows only the caller's ----
{
    my ($res, $v) = api_get('/mandates/current', $M);
    is($res->code, 200, 'GET /mandates/current for Mallory');
    is($v->{id}, $mmd->{id}, '... her mandate, not Alice\'s');
    is($v->{user}, $mallory, '... her user');
    is($v->{spent_this_month_cents}, one("SELECT SUM(budget_cents) FROM orders WHERE mandate_id = '$mmd->{id}'"),
       '... her own spending only');
    unlike($res->content, qr/\Q$alice\E|\Q$amd->{id}\E/, '... nothing of Alice\'s');
}
# Asking for Alice's by query: docs/api.md refuses unknown query parameters
# (400); whatever the answer, it must never be Alice's mandate.
for my $qs ("user=$alice", "mandate_id=$amd->{id}") {
    my ($res, $v) = api_get("/mandates/current?$qs", $M);
    is_json_error($res, $v, 400, 'VALIDATION_ERROR', "GET /mandates/current?$qs: 400 (unknown parameter)")
      && is($v->{field}, ($qs =~ /^(\w+)/)[0], '... naming it');
    unlike($res->content, qr/\Q$alice\E|\Q$amd->{id}\E/, "... and never Alice's mandate");
}

done_testing();
