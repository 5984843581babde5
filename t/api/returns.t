# POST /v1/returns (4.12): Idempotency-Key, the five reason codes, what is
# returnable, the window, the right-item guarantee's instant refund, the label
# and the suggested replacement.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use AgentShop::Test;

my ($user, $key) = new_agent();
my $H = agent_headers($key);
new_mandate($user, per_order => 1000, monthly => 10000, confirm_above => 1000);
my $reason = 'Order for the return tests, best-ranked offer that fits.';
my $n = 0;

sub place {
    my (%q) = @_;
    my ($r0, $q) = post_json('/quotes', $H, \%q);
    die 'quote failed: ' . $r0->content unless $r0->code == 201;
    my ($res, $v) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => "r$$-" . ++$n),
                              { quote_id => $q->{id}, reason => $reason });
    die 'order failed: ' . $res->content unless $res->code == 201;
    return $v;
}
sub spent { (api_get('/mandates/current', $H))[1]{spent_this_month_cents} }
sub ret {
    my ($ikey, $body) = @_;
    return post_json('/returns', agent_headers($key, $ikey ? ('Idempotency-Key' => $ikey) : ()), $body);
}

# A part that fits a device (so the order carries the guarantee).
my ($part, $slug) = live_part();
ok($part, "a part that fits $slug");
my $o = place(sku => $part->{sku}, device => $slug);
ok($o->{right_item_guarantee}, 'the order carries the right-item guarantee');
is($o->{fit_status}, 'fits', '... and the fit status');

my ($res, $v) = ret(undef, { order_id => $o->{id}, reason_code => 'does_not_fit' });
is_json_error($res, $v, 400, 'IDEMPOTENCY_KEY_REQUIRED', 'a return without Idempotency-Key: 400');
for my $b ([ { order_id => $o->{id} }, 'reason_code' ], [ { order_id => $o->{id}, reason_code => 'changed_mind' }, 'reason_code' ],
           [ { reason_code => 'defective' }, 'order_id' ], [ { order_id => 'ab', reason_code => 'defective' }, 'order_id' ],
           [ { order_id => $o->{id}, reason_code => 'defective', note => 'n' x 401 }, 'note' ],
           [ { order_id => $o->{id}, reason_code => 'defective', refund_cents => 1 }, 'refund_cents' ]) {
    ($res, $v) = ret("bad-$$-" . ++$n, $b->[0]);
    is_json_error($res, $v, 400, 'VALIDATION_ERROR', 'return body ' . json_encode($b->[0]) . ' is 400')
      && is($v->{field}, $b->[1], "... field $b->[1]");
}
($res, $v) = ret("r-placed-$$", { order_id => $o->{id}, reason_code => 'does_not_fit' });
is_json_error($res, $v, 409, 'ORDER_NOT_RETURNABLE', 'a placed (not shipped) order: 409 ORDER_NOT_RETURNABLE');
like($v->{message}, qr/cancel/, '... which suggests cancelling');
($res, $v) = ret("r-unknown-$$", { order_id => 'ord_nosuchorder', reason_code => 'defective' });
is_json_error($res, $v, 404, 'NOT_FOUND', 'an unknown order: 404');
my ($other, $okey) = new_agent();
($res, $v) = post_json('/returns', agent_headers($okey, 'Idempotency-Key' => 'x'), { order_id => $o->{id}, reason_code => 'defective' });
is_json_error($res, $v, 404, 'NOT_FOUND', "another user's order: 404");
($res, $v) = post_json('/returns', [ 'Content-Type' => 'application/json', 'Idempotency-Key' => 'x' ], { order_id => $o->{id}, reason_code => 'defective' });
is_json_error($res, $v, 403, 'AGENT_UNIDENTIFIED', 'without a key: 403');

# The right-item guarantee: does_not_fit on a shipped order bought for a device.
ctl('order', 'ship', $o->{id});
my $spent0 = spent();
my %body = (order_id => $o->{id}, reason_code => 'does_not_fit', note => 'The filter is 2 mm too wide.');
my $K = "ret-$$-1";
($res, $v) = ret($K, \%body);
is($res->code, 201, 'return of a shipped order: 201');
my $r = $v;
is($r->{refund_status}, 'refunded', '... refunded at once under the right-item guarantee');
is($r->{refund_cents}, $o->{total_cents}, '... the full amount');
is($r->{reason_code}, 'does_not_fit', '... reason recorded');
is($r->{order_status}, 'returned', '... the order is returned');
ok($r->{label}{carrier} && $r->{label}{tracking_code} && $r->{label}{url} =~ m{^http://.+/v1/returns/\Q$r->{id}\E/label\?token=},
   '... with a label: carrier, tracking code, URL');
is(spent(), $spent0 - $o->{total_cents}, 'the refund gives the amount back to the month\'s budget');
my $sug = $r->{suggested_replacement};
if ($sug) {
    isnt($sug->{sku}, $part->{sku}, 'the suggested replacement is another product');
    is($sug->{part_type}, $part->{part_type}, '... of the same part type');
    is($sug->{fit_status}, 'fits', '... that fits the device');
    ok($sug->{best_offer}, '... and can be bought now');
    my (undef, $pv) = api_get("/products/$sug->{sku}?device=$slug");
    is($pv->{fit_status}, 'fits', '... as its product view confirms');
} else {
    my @alt = grep { my $q = $_; $q->{sku} ne $part->{sku} && $q->{part_type} eq $part->{part_type} && !product_is_contradicted($q)
                     && grep { $_->{device} eq $slug && $_->{fit_status} eq 'fits' } @{ $q->{compatibility} // [] } } @{ demo_data('products') };
    my @buyable = grep { my (undef, $pv) = api_get("/products/$_->{sku}"); @{ $pv->{offers}{ranked} } } @alt;
    is(scalar @buyable, 0, 'no replacement is suggested only when no other fitting part can be bought');
}
($res, $v) = ret($K, \%body);
is($res->code, 201, 'the same key and body: the first response again');
is($res->header('Idempotent-Replayed'), 'true', '... marked replayed');
is($v->{id}, $r->{id}, '... the same return');
($res, $v) = ret($K, { %body, reason_code => 'defective' });
is_json_error($res, $v, 422, 'IDEMPOTENCY_KEY_REUSED', 'the same key with another body: 422');
($res, $v) = ret("ret-$$-2", \%body);
is_json_error($res, $v, 409, 'ORDER_NOT_RETURNABLE', 'a second return of the same order: 409');
is(scalar sql("SELECT id FROM returns WHERE order_id = '$o->{id}'"), 1, 'one return in the database');

# The label a person prints: its link is signed; the id alone opens nothing.
my ($lpath, $ltoken) = $r->{label}{url} =~ m{/v1(/returns/[^?]+/label)\?token=([A-Za-z0-9_-]{20,})$};
ok($ltoken, 'the label URL carries a signed token');
($res) = api('GET', "$lpath?token=$ltoken");
is($res->code, 200, 'the label URL works, without a key');
like($res->header('Content-Type'), qr{^text/html}, '... as a page');
like($res->content, qr/\Q$r->{label}{tracking_code}\E/, '... with the tracking code');
($res, $v) = api_get("/returns/$r->{id}/label");
is_json_error($res, $v, 404, 'NOT_FOUND', 'the label by its id alone: 404');
unlike($res->content, qr/\Q$r->{label}{tracking_code}\E/, '... showing nothing of it');
(my $bad = $ltoken) =~ tr/A-Za-z/B-ZAb-za/;
($res, $v) = api_get("$lpath?token=$bad");
is_json_error($res, $v, 404, 'NOT_FOUND', '... with a wrong token: 404');
($res, $v) = api_get("/returns/ret_nosuch/label?token=$ltoken");
is_json_error($res, $v, 404, 'NOT_FOUND', "... another return's token: 404");
($res) = api('GET', "/returns/$r->{id}/label", $H);
is($res->code, 200, "with the agent key of the return's user: 200");
my (undef, $stranger) = new_agent();
($res, $v) = api_get("/returns/$r->{id}/label", agent_headers($stranger));
is_json_error($res, $v, 404, 'NOT_FOUND', "another user's key: 404");
($res, $v) = api_get('/returns/ret_nosuch/label');
is_json_error($res, $v, 404, 'NOT_FOUND', 'an unknown label: 404');

# No guarantee: a delivered order without a device, wrong_item -> inspection.
my ($soap) = grep { $_->{category} eq 'hand-soap' && $_->{source}{availability} eq 'in_stock' } @{ demo_data('products') };
my $o2 = place(sku => $soap->{sku});
ctl('order', 'deliver', $o2->{id});
$spent0 = spent();
($res, $v) = ret("ret-$$-3", { order_id => $o2->{id}, reason_code => 'wrong_item' });
is($res->code, 201, 'return of a delivered order bought without a device: 201');
is($v->{refund_status}, 'pending_inspection', '... waits for inspection (no guarantee without a device)');
is($v->{refund_cents}, 0, '... nothing refunded yet');
ok(!defined $v->{suggested_replacement}, '... no replacement without a device');
is(spent(), $spent0, '... the budget is unchanged');

# A guaranteed order returned for another reason is inspected too.
my $o3 = place(sku => $part->{sku}, device => $slug);
ctl('order', 'deliver', $o3->{id});
($res, $v) = ret("ret-$$-4", { order_id => $o3->{id}, reason_code => 'no_longer_needed' });
is($v->{refund_status}, 'pending_inspection', 'no_longer_needed is never refunded at once');

# The window: AgentShopReturnWindow (30) days after delivery. The orders are
# made older first (as if placed weeks ago): a delivery cannot be recorded
# before the order's last change.
sub older {
    my ($id, $days) = @_;
    my $by = $days * 86400;
    sql_write("UPDATE orders SET created_at = created_at - $by, updated_at = updated_at - $by WHERE id = '$id'");
    sql_write("UPDATE order_events SET at = at - $by WHERE order_id = '$id'");
}
my $o4 = place(sku => $soap->{sku});
my @t = gmtime(time - 40 * 86400);
my $long_ago = sprintf '%04d-%02d-%02d', $t[5] + 1900, $t[4] + 1, $t[3];
my $refused = `@{[ ctl_argv('order', 'deliver', $o4->{id}, '--at', $long_ago) ]} 2>&1`;
ok($? != 0 && $refused =~ /--at \Q$long_ago\E is before the last change of order \Q$o4->{id}\E/,
   'agentshopctl order deliver --at refuses a day before the order was placed') or diag $refused;
is((sql("SELECT status FROM orders WHERE id = '$o4->{id}'"))[0][0], 'placed', '... and leaves the order as it was');
older($o4->{id}, 41);
ctl('order', 'deliver', $o4->{id}, '--at', $long_ago);
($res, $v) = ret("ret-$$-5", { order_id => $o4->{id}, reason_code => 'defective' });
is_json_error($res, $v, 422, 'RETURN_WINDOW_CLOSED', 'delivered 40 days ago: 422 RETURN_WINDOW_CLOSED');
my $o5 = place(sku => $soap->{sku});
older($o5->{id}, 30);
@t = gmtime(time - 29 * 86400);
ctl('order', 'deliver', $o5->{id}, '--at', sprintf('%04d-%02d-%02d', $t[5] + 1900, $t[4] + 1, $t[3]));
($res, $v) = ret("ret-$$-6", { order_id => $o5->{id}, reason_code => 'damaged_in_transit' });
is($res->code, 201, 'delivered 29 days ago: still returnable');
my $o6 = place(sku => $soap->{sku});
@t = gmtime(time);
my $today = sprintf '%04d-%02d-%02d', $t[5] + 1900, $t[4] + 1, $t[3];
is(ctl('order', 'deliver', $o6->{id}, '--at', $today)->{status}, 'delivered',
   'an order placed today can be delivered --at today, whatever the hour');

# mandate_spent, kept by triggers on orders, against the orders themselves.
is_deeply([ spent_mismatches() ], [], "every mandate's running total of a month equals the sum of its orders' budgets, after refunds");

done_testing();
