# GET /v1/orders/{id} (4.10) with the simulated fulfilment, agentshopctl order
# ship|deliver, and POST /v1/orders/{id}/cancel (4.11).
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use AgentShop::Test;

my ($user, $key) = new_agent();
my $H = agent_headers($key);
new_mandate($user, per_order => 1000, monthly => 10000, confirm_above => 1000);
my $reason = 'Order for the after-sale tests, best-ranked offer.';
my ($p, $off) = buyable_offer(min_stock => 10, max_cents => 3000);
my $n = 0;

sub place {
    my (%o) = @_;
    my (undef, $q) = post_json('/quotes', $H, { sku => $p->{sku}, offer_id => $off->{offer_id}, %o });
    my ($res, $v) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => "o$$-" . ++$n),
                              { quote_id => $q->{id}, reason => $reason });
    die 'order failed: ' . $res->content unless $res->code == 201 || $res->code == 202;
    return $v->{order} // $v;
}
sub stock { (sql("SELECT stock FROM offers WHERE id = '$off->{offer_id}'"))[0][0] }
sub spent { (api_get('/mandates/current', $H))[1]{spent_this_month_cents} }

# ---- GET /orders/{id} ----
my $o = place();
my ($res, $v) = api_get("/orders/$o->{id}", $H);
is($res->code, 200, 'GET /orders/{id}');
is($v->{id}, $o->{id}, '... the order');
is($v->{status}, 'placed', '... placed');
is_deeply([ map { $_->{status} } @{ $v->{timeline} } ], ['placed'], '... with its timeline');
like($v->{timeline}[0]{at}, qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, '... each entry timed');
ok($v->{cancellable}, '... cancellable');
ok(!$v->{returnable}, '... not yet returnable');
($res, $v) = api_get("/orders/$o->{id}");
is_json_error($res, $v, 403, 'AGENT_UNIDENTIFIED', 'without a key: 403');
($res, $v) = api_get('/orders/ord_nosuchorder', $H);
is_json_error($res, $v, 404, 'NOT_FOUND', 'an unknown order: 404');
my ($other, $okey) = new_agent();
($res, $v) = api_get("/orders/$o->{id}", agent_headers($okey));
is_json_error($res, $v, 404, 'NOT_FOUND', "another user's order: 404, as if it did not exist");

# ---- simulated fulfilment (ships 2 s after placing on /fast/v1) ----
{
    local $AgentShop::Test::BASE = '/fast/v1';
    my $f = place();
    ($res, $v) = api_get("/orders/$f->{id}", $H);
    is($v->{status}, 'placed', 'a fresh order is placed');
    sleep 3;
    ($res, $v) = api_get("/orders/$f->{id}", $H);
    is($v->{status}, 'shipped', 'after AgentShopShipAfter it is shipped, worked out when read');
    is_deeply([ map { $_->{status} } @{ $v->{timeline} } ], [qw(placed shipped)], '... and the timeline says so, in order');
    my ($placed_at, $shipped_at) = map { $_->{at} } @{ $v->{timeline} };
    ok($shipped_at gt $placed_at, '... shipped after it was placed');
    my ($row) = sql("SELECT status FROM orders WHERE id = '$f->{id}'");
    is($row->[0], 'shipped', '... stored when it changed');
    ($res, my $again) = api_get("/orders/$f->{id}", $H);
    is_deeply($again->{timeline}, $v->{timeline}, 'reading again changes nothing');
    ok(!$v->{cancellable} && $v->{returnable}, 'a shipped order can be returned, not cancelled');
    ($res, $v) = post_json("/orders/$f->{id}/cancel", $H, '');
    is_json_error($res, $v, 409, 'ORDER_NOT_CANCELLABLE', 'cancelling a shipped order: 409 ORDER_NOT_CANCELLABLE');
    like($v->{message}, qr/return/, '... which points to a return');
}

# ---- agentshopctl order ship | deliver ----
my $s = place();
my $shipped = ctl('order', 'ship', $s->{id});
is($shipped->{status}, 'shipped', 'agentshopctl order ship moves a placed order on');
my $out = `${\ ctl_argv('order', 'ship', $s->{id})} 2>&1`;
ok($? != 0 && $out =~ /only a placed order can ship/, '... but not twice') or diag $out;
my $d = ctl('order', 'deliver', $s->{id});
is($d->{status}, 'delivered', 'agentshopctl order deliver');
($res, $v) = api_get("/orders/$s->{id}", $H);
is_deeply([ map { $_->{status} } @{ $v->{timeline} } ], [qw(placed shipped delivered)], '... the timeline has every step');
ok($v->{delivered_at} && $v->{return_window_ends_at}, '... with delivery time and the return window');
$out = `${\ ctl_argv('order', 'deliver', 'ord_nosuch')} 2>&1`;
ok($? != 0 && $out =~ /no order 'ord_nosuch'/, 'an unknown order id is a clear error');

# ---- cancel ----
my ($stock0, $spent0) = (stock(), spent());
my $c = place(quantity => 2);
is(stock(), $stock0 - 2, 'an order holds its stock');
($res, $v) = post_json("/orders/$c->{id}/cancel", $H, '');
is($res->code, 200, 'cancel a placed order: 200');
is($v->{status}, 'cancelled', '... cancelled');
is($v->{timeline}[-1]{status}, 'cancelled', '... with a timeline entry');
like($v->{timeline}[-1]{note}, qr/test-agent\/1\.0/, '... naming the agent');
is(stock(), $stock0, '... the stock is back');
is(spent(), $spent0, '... and the budget released');
($res, $v) = post_json("/orders/$c->{id}/cancel", $H, '');
is($res->code, 200, 'cancelling again answers 200 with the order as it is');
is(scalar(grep { $_->{status} eq 'cancelled' } @{ $v->{timeline} }), 1, '... without a second entry');
is(stock(), $stock0, '... or a second restock');
($res, $v) = post_json("/orders/$o->{id}/cancel", agent_headers($okey), '');
is_json_error($res, $v, 404, 'NOT_FOUND', "cancelling another user's order: 404");
($res, $v) = post_json('/orders/ord_nosuchorder/cancel', $H, '');
is_json_error($res, $v, 404, 'NOT_FOUND', 'cancelling an unknown order: 404');
($res, $v) = post_json("/orders/$o->{id}/cancel", [ 'Content-Type' => 'application/json' ], '');
is_json_error($res, $v, 403, 'AGENT_UNIDENTIFIED', 'cancelling without a key: 403');
($res) = api('GET', "/orders/$o->{id}/cancel", $H);
is($res->code, 405, 'GET on cancel is 405');

# Cancelling an order that waits for a human settles its confirmation too.
revoke_active($user);
new_mandate($user, per_order => 1000, monthly => 10000, confirm_above => sprintf('%.2f', ($off->{price_cents} - 1) / 100));
my $w = place();
is($w->{status}, 'awaiting_confirmation', 'an order awaiting a human');
my $spent1 = spent();
($res, $v) = post_json("/orders/$w->{id}/cancel", $H, '');
is($v->{status}, 'cancelled', '... can be cancelled');
is(spent(), $spent1 - $off->{price_cents}, '... releasing the budget it reserved');
my ($cs) = sql("SELECT c.status FROM confirmations c WHERE c.order_id = '$w->{id}'");
is($cs->[0], 'cancelled', '... and its confirmation is cancelled: the link can no longer approve it');

# mandate_spent, kept by triggers on orders, against the orders themselves.
is_deeply([ spent_mismatches() ], [], "every mandate's running total of a month equals the sum of its orders' budgets, after cancels");

done_testing();
