# Buying: identity (spec 5), GET /mandates/current (4.7), POST /quotes (4.8),
# POST /orders (4.9) and the errors of part 7 they can give.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use AgentShop::Test;
use JSON::PP ();

my ($user, $key, $key_id) = new_agent();
my $H = agent_headers($key);

# Each scenario below reads responses of its own: a failed check is that
# check's failure only.

# ---- identity ----
(my $wrong_prefix = $key) =~ s/^agentshop_/othershop_/;
my $forged = 'agentshop_sk_test_' . ('A' x 32);
# Each: the headers of GET /mandates/current, and the check's name.
for my $case (
    [ undef, 'no key: 403 AGENT_UNIDENTIFIED' ],
    [ [ Authorization => "Bearer $key" ], 'no Service-Agent: 403' ],
    [ [ Authorization => "Bearer $key", 'Service-Agent' => 'just-a-name' ], 'Service-Agent without a version: 403' ],
    [ agent_headers($wrong_prefix), 'a key of another prefix: 403' ],
    [ agent_headers($forged), 'a well-formed unknown key: 403' ],
) {
    my ($headers, $name) = @$case;
    my ($res, $v) = api_get('/mandates/current', $headers);
    is_json_error($res, $v, 403, 'AGENT_UNIDENTIFIED', $name);
}
{
    my ($res, $v) = api_get('/mandates/current', agent_headers(substr($key, 0, -1)));
    is_json_error($res, $v, 403, 'AGENT_UNIDENTIFIED', 'a truncated key: 403');
    unlike($res->content, qr/\Q$key\E|\Q${\ substr($key, -32)}\E/, 'the error does not echo the key');
}
{
    my ($res, $v) = api_get('/mandates/current', [ Authorization => "Basic $key", 'Service-Agent' => 'a/1' ]);
    is_json_error($res, $v, 403, 'AGENT_UNIDENTIFIED', 'a key sent as Basic: 403');
}

# ---- the mandate ----
{
    my ($res, $v) = api_get('/mandates/current', $H);
    is_json_error($res, $v, 403, 'MANDATE_INVALID', 'a user without a mandate: 403 MANDATE_INVALID');
}
my $md = new_mandate($user, per_order => 80, monthly => 200, confirm_above => 60,
                     categories => 'hand-soap,printer-ink,batteries,chargers-cables,air-filters,vacuum-parts,coffee-kitchen');
{
    my ($res, $v) = api_get('/mandates/current', $H);
    is($res->code, 200, 'GET /mandates/current');
    is($v->{id}, $md->{id}, '... the active mandate');
    is($v->{$_->[0]}, $_->[1], "... $_->[0]") for [ per_order_limit_cents => 8000 ],
      [ monthly_limit_cents => 20000 ], [ confirm_above_cents => 6000 ],
      [ spent_this_month_cents => 0 ], [ remaining_this_month_cents => 20000 ], [ status => 'active' ];
    is(ref $v->{allowed_categories}, 'ARRAY', '... allowed_categories is a list');
    ok(scalar(grep { $_ eq 'printer-ink' } @{ $v->{allowed_categories} // [] }), '... with the categories');
}

# ---- quotes ----
my ($p, $off) = buyable_offer(category => 'hand-soap', min_stock => 4, max_cents => 1500);
ok($p, "an in-stock hand soap to buy ($p->{sku}, $off->{offer_id})") or die "no hand soap to buy\n";
my $q;
{
    my $res;
    ($res, $q) = post_json('/quotes', $H, { sku => $p->{sku}, offer_id => $off->{offer_id}, quantity => 2 });
    is($res->code, 201, 'POST /quotes: 201');
    $q //= {};
}
like($q->{id}, qr/^[A-Za-z0-9_]{3,40}$/, '... an id of 3 to 40 characters');
is($q->{offer_id}, $off->{offer_id}, '... the offer asked for');
is($q->{unit_price_cents}, $off->{price_cents}, '... at the offer price');
is($q->{total_cents}, 2 * $off->{price_cents}, '... the exact total for the quantity');
is($q->{quantity}, 2, '... quantity');
is($q->{delivery_by}, $off->{delivery_by}, '... the delivery date');
is($q->{currency}, 'EUR', '... in EUR');
ok(!exists $q->{device}, '... no device fields without a device');
{
    my ($c, $e) = map { my @t = /(\d+)-(\d+)-(\d+)T(\d+):(\d+):(\d+)Z/; $t[3] * 3600 + $t[4] * 60 + $t[5] + $t[2] * 86400 }
      $q->{created_at}, $q->{expires_at};
    is($e - $c, 600, '... valid for 10 minutes');
}
{
    my (undef, $v) = post_json('/quotes', $H, { sku => $p->{sku} });
    is($v->{quantity}, 1, 'quantity defaults to 1');
    is($v->{offer_id}, $p->{offers}{best}{offer_id}, 'without offer_id the top-ranked offer is quoted');
}
{
    my (undef, $v) = post_json('/quotes', $H, { sku => $p->{sku}, weights => { delivery => 1 } });
    my ($fast) = sort { $a->{delivery_days} <=> $b->{delivery_days} || $b->{components}{delivery} <=> $a->{components}{delivery} } @{ $p->{offers}{ranked} };
    is($v->{delivery_days}, $fast->{delivery_days}, 'weights are honoured (delivery only: the fastest offer)');
}
{
    my ($part, $slug) = live_part();
    my ($res, $v) = post_json('/quotes', $H, { sku => $part->{sku}, device => $slug });
    is($res->code, 201, 'a quote for a device') or diag $res->content;
    is($v->{device}, $slug, '... names the device');
    is($v->{fit_status}, 'fits', '... carries the fit status');
    ok($v->{right_item_guarantee}, '... and the right-item guarantee');
}

my @bad = (
    [ {}, 'sku' ], [ { sku => 'AB' }, 'sku' ], [ { sku => $p->{sku}, quantity => 11 }, 'quantity' ],
    [ { sku => $p->{sku}, quantity => 0 }, 'quantity' ], [ { sku => $p->{sku}, quantity => '2' }, 'quantity' ],
    [ { sku => $p->{sku}, quantity => 1.5 }, 'quantity' ], [ { sku => $p->{sku}, colour => 'red' }, 'colour' ],
    # null is not an omitted field: a wrong type, named like any other (issue 59)
    [ { sku => $p->{sku}, quantity => undef }, 'quantity' ], [ { sku => $p->{sku}, offer_id => undef }, 'offer_id' ],
    [ { sku => $p->{sku}, offer_id => 'x' x 61 }, 'offer_id' ], [ { sku => $p->{sku}, device => 'd' x 101 }, 'device' ],
    [ { sku => $p->{sku}, postcode => '1' x 13 }, 'postcode' ], [ { sku => $p->{sku}, deliver_by => '2026-02-30' }, 'deliver_by' ],
    [ { sku => $p->{sku}, weights => { price => 2 } }, 'weights' ], [ { sku => 12345 }, 'sku' ],
    [ '[1,2]', 'body' ], [ '{"sku": ', 'body' ], [ '{"sku":"A1B2","sku":"A1B2"}', 'body' ], [ '', 'body' ],
);
for my $b (@bad) {
    my ($res, $v) = post_json('/quotes', $H, $b->[0]);
    my $desc = ref $b->[0] ? json_encode($b->[0]) : "'$b->[0]'";
    is_json_error($res, $v, 400, 'VALIDATION_ERROR', "quote body $desc is 400")
      && is($v->{field}, $b->[1], "... field $b->[1]");
}
my ($oos) = grep { $_->{source}{availability} eq 'out_of_stock' } @{ demo_data('products') };
# Each: the headers and body of a quote refused, its status and code.
for my $case (
    [ [ 'Content-Type' => 'application/json' ], { sku => $p->{sku} }, 403, 'AGENT_UNIDENTIFIED', 'a quote without a key is 403' ],
    [ $H, { sku => 'NO-SUCH-SKU' }, 404, 'NOT_FOUND', 'a quote for an unknown sku is 404' ],
    [ $H, { sku => $p->{sku}, offer_id => 'no-such-offer' }, 404, 'NOT_FOUND', 'an unknown offer_id is 404' ],
    [ $H, { sku => $oos->{sku} }, 409, 'OUT_OF_STOCK', 'a quote for an out-of-stock product is 409 OUT_OF_STOCK' ],
    $off->{stock} < 10
      ? [ $H, { sku => $p->{sku}, offer_id => $off->{offer_id}, quantity => 10 }, 409, 'OUT_OF_STOCK',
          'more units than the offer has is 409' ] : (),
) {
    my ($headers, $body, $status, $code, $name) = @$case;
    my ($res, $v) = post_json('/quotes', $headers, $body);
    is_json_error($res, $v, $status, $code, $name);
}
{
    my ($res) = api('GET', '/quotes');
    is($res->code, 405, 'GET /quotes is 405');
}

# ---- orders ----
my $reason = 'The cheapest verified hand soap that arrives this week.';
my %order = (quote_id => $q->{id}, reason => $reason);
{
    my ($res, $v) = post_json('/orders', $H, \%order);
    is_json_error($res, $v, 400, 'IDEMPOTENCY_KEY_REQUIRED', 'an order without Idempotency-Key is 400');
    is($v->{field}, 'Idempotency-Key', '... naming the header');
}
my $stock_before = stock_of($p->{sku}, $off->{offer_id});
my $K1 = "order-$$-1";
my $o;
{
    my $res;
    ($res, $o) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => $K1), \%order);
    is($res->code, 201, 'POST /orders: 201, placed');
    $o //= {};
}
is($o->{status}, 'placed', '... status placed');
is($o->{quote_id}, $q->{id}, '... from the quote');
is($o->{total_cents}, $q->{total_cents}, '... for the quoted total');
is($o->{reason}, $reason, '... with the reason');
is($o->{receipt}{reason}, $reason, '... which is on the receipt');
is($o->{mandate_id}, $md->{id}, '... against the active mandate');
is($o->{timeline}[0]{status}, 'placed', '... and a timeline');
is(stock_of($p->{sku}, $off->{offer_id}), $stock_before - 2, 'the order took 2 units of stock');
{
    my (undef, $v) = api_get('/mandates/current', $H);
    is($v->{spent_this_month_cents}, $q->{total_cents}, 'the mandate counts the order');
    is($v->{remaining_this_month_cents}, 20000 - ($q->{total_cents} // 0), '... and the remaining budget');
}
{
    my ($res, $again) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => $K1), \%order);
    is($res->code, 201, 'a retry with the same key and body gets 201 again');
    is($res->header('Idempotent-Replayed'), 'true', '... marked Idempotent-Replayed');
    is_deeply($again, $o, '... with the first body');
    is(scalar sql("SELECT id FROM orders WHERE quote_id = '$q->{id}'"), 1, '... and no second order');
}
# Each: the key and body of an order refused, its status and code.
for my $case (
    [ $K1, { %order, reason => "$reason Again." }, 422, 'IDEMPOTENCY_KEY_REUSED', 'the same key with another body is 422' ],
    [ "order-$$-2", \%order, 409, 'QUOTE_ALREADY_USED', 'a used quote cannot become a second order' ],
    [ "order-$$-3", { %order, quote_id => 'q_nosuchquote' }, 404, 'NOT_FOUND', 'an unknown quote is 404' ],
) {
    my ($ik, $body, $status, $code, $name) = @$case;
    my ($res, $v) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => $ik), $body);
    is_json_error($res, $v, $status, $code, $name);
}

# A claim still in flight (a request running, or one whose process died).
{
    use Digest::SHA qw(sha256_hex);
    my (undef, $qf) = post_json('/quotes', $H, { sku => $p->{sku} });
    my %body = (quote_id => $qf->{id}, reason => $reason);
    my $hash = sha256_hex(JSON::PP->new->utf8->canonical->encode(\%body));
    my $ik = "inflight-$$";
    sql_write("INSERT INTO idempotency (user_id, scope, key, request_hash, state, created_at, lease_until) "
              . "VALUES ('$user', 'orders', '$ik', '$hash', 'in_flight', ${\ time}, ${\ (time + 30)})");
    {
        my ($res, $v) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => $ik), \%body);
        is_json_error($res, $v, 409, 'IDEMPOTENCY_KEY_IN_USE', 'a key still in flight is 409 IDEMPOTENCY_KEY_IN_USE');
        my $after = $res->header('Retry-After') // 0;
        ok($after >= 1 && $after <= 30, '... with Retry-After');
    }
    sql_write("UPDATE idempotency SET lease_until = ${\ (time - 1)} WHERE key = '$ik'");
    {
        my ($res) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => $ik), \%body);
        is($res->code, 201, 'after its lease ran out (the process died), a retry takes the claim over');
        is(scalar sql("SELECT id FROM orders WHERE quote_id = '$qf->{id}'"), 1, '... and places exactly one order');
    }
    {
        my ($res) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => $ik), \%body);
        is($res->header('Idempotent-Replayed'), 'true', '... which later retries replay');
    }
}

my ($other, $okey) = new_agent();
new_mandate($other);
my $mine = (post_json('/quotes', $H, { sku => $p->{sku} }))[1]{id} // 'none';
{
    my ($res, $v) = post_json('/orders', agent_headers($okey, 'Idempotency-Key' => 'x1'), { quote_id => $mine, reason => $reason });
    is_json_error($res, $v, 404, 'NOT_FOUND', "another user's quote is 404, as if it did not exist");
}
{
    my ($res, $v) = post_json('/orders', agent_headers($okey, 'Idempotency-Key' => 'x2'), { quote_id => $mine, reason => $reason, mandate_id => $md->{id} });
    is_json_error($res, $v, 404, 'NOT_FOUND', "... also when naming the owner's mandate");
}

for my $b ([ { quote_id => $mine }, 'reason' ], [ { quote_id => $mine, reason => 'too short' }, 'reason' ],
           [ { quote_id => $mine, reason => 'r' x 501 }, 'reason' ], [ { reason => $reason }, 'quote_id' ],
           [ { quote_id => 'ab', reason => $reason }, 'quote_id' ], [ { quote_id => $mine, reason => $reason, mandate_id => 'm' x 41 }, 'mandate_id' ],
           [ { quote_id => $mine, reason => $reason, status => 'placed' }, 'status' ],
           [ { quote_id => $mine, reason => $reason, mandate_id => undef }, 'mandate_id' ],
           [ { quote_id => $mine, reason => $reason, total_cents => 1 }, 'total_cents' ]) {
    my ($res, $v) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => 'bad-$$-' . $b->[1] . length(json_encode($b->[0]))), $b->[0]);
    is_json_error($res, $v, 400, 'VALIDATION_ERROR', 'order body ' . json_encode($b->[0]) . ' is 400')
      && is($v->{field}, $b->[1], "... field $b->[1]");
}
{
    my ($res, $v) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => "m-$$"), { quote_id => $mine, reason => $reason, mandate_id => 'mdt_nosuchmandate' });
    is_json_error($res, $v, 403, 'MANDATE_INVALID', 'an unknown mandate_id is 403 MANDATE_INVALID');
}

# The mandate's checks: category, per-order limit, monthly limit, confirm-above.
my ($lu, $lkey) = new_agent();
my $LH = agent_headers($lkey);
my ($sp, $soff) = buyable_offer(category => 'hand-soap', min_stock => 3, max_cents => 1000);
ok($sp, "a hand soap for the mandate's checks ($soff->{offer_id})") or die "no hand soap to buy\n";
# A new quote of that soap for the limited user: its id.
my $soap_quote = sub { (post_json('/quotes', $LH, { sku => $sp->{sku}, offer_id => $soff->{offer_id} }))[1]{id} // 'none' };
my $lorder = sub { my ($ik, %body) = @_; post_json('/orders', agent_headers($lkey, 'Idempotency-Key' => $ik), { reason => $reason, %body }) };
{
    my ($res, $v) = $lorder->('l0', quote_id => $soap_quote->());
    is_json_error($res, $v, 403, 'MANDATE_INVALID', 'ordering without a mandate is 403 MANDATE_INVALID');
}
my $lm = new_mandate($lu, categories => 'printer-ink', per_order => 1000, monthly => 2000, confirm_above => 1000);
my $soap_q = $soap_quote->();
{
    my ($res, $v) = $lorder->('l1', quote_id => $soap_q);
    is_json_error($res, $v, 422, 'CATEGORY_NOT_ALLOWED', 'a category the mandate does not allow is 422');
}
ctl('mandate', 'revoke', $lm->{id});
{
    my ($res, $v) = api_get('/mandates/current', $LH);
    is_json_error($res, $v, 403, 'MANDATE_INVALID', 'after revoking, GET /mandates/current is 403');
}
{
    my ($res, $v) = $lorder->('l2', quote_id => $soap_q, mandate_id => $lm->{id});
    is_json_error($res, $v, 403, 'MANDATE_INVALID', 'ordering against a revoked mandate is 403');
}

my $price = $soff->{price_cents};
my $per = sprintf '%.2f', ($price - 1) / 100;
new_mandate($lu, categories => 'hand-soap', per_order => $per, monthly => 1000, confirm_above => $per);
{
    my ($res, $v) = $lorder->('l3', quote_id => $soap_q);
    is_json_error($res, $v, 403, 'MANDATE_INVALID', 'one cent over the per-order limit is 403');
    like($v->{message}, qr/per-order limit/, '... naming the limit');
    like($v->{message}, qr/remaining this month: \x{20ac}1000\.00/, '... and the remaining budget');
}

revoke_active($lu);
my $exact = sprintf '%.2f', $price / 100;
new_mandate($lu, categories => 'hand-soap', per_order => $exact, monthly => sprintf('%.2f', (2 * $price - 1) / 100), confirm_above => $exact);
{
    my ($res) = $lorder->('l4', quote_id => $soap_q);
    is($res->code, 201, 'exactly the per-order limit (and the threshold) is placed without confirmation');
}
{
    my ($res, $v) = $lorder->('l5', quote_id => $soap_quote->());
    is_json_error($res, $v, 403, 'MANDATE_INVALID', 'one cent over the monthly limit is 403');
    like($v->{message}, qr/monthly limit/, '... naming the monthly limit');
    my $left_eur = sprintf '%.2f', ($price - 1) / 100;
    like($v->{message}, qr/\Q$left_eur\E/, '... and what is left of it');
}

# Above the threshold: 202, a confirmation, budget reserved.
revoke_active($lu);
my $cm = new_mandate($lu, categories => 'hand-soap', per_order => 100, monthly => 100, confirm_above => sprintf('%.2f', ($price - 1) / 100));
{
    my $lq = $soap_quote->();
    my $stock0 = stock_of($sp->{sku}, $soff->{offer_id});
    my ($res, $v) = $lorder->('l6', quote_id => $lq);
    is($res->code, 202, 'above the confirm-above threshold: 202');
    is($v->{error}, 'CONFIRMATION_REQUIRED', '... CONFIRMATION_REQUIRED');
    ok(length $v->{message}, '... with a message');
    like($v->{order_id}, qr/^ord_/, '... the order id');
    like($v->{confirmation}{url}, qr{^http://[^/]+/v1/confirmations/\Q${\ ($v->{confirmation}{id} // 'none')}\E\?token=[A-Za-z0-9_-]{43}$},
         '... an absolute signed link');
    like($v->{confirmation}{expires_at}, qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, '... and its expiry');
    is($v->{order}{status}, 'awaiting_confirmation', '... the order awaits confirmation');
    is(stock_of($sp->{sku}, $soff->{offer_id}), $stock0 - 1, '... holding its stock');
    my (undef, $mv) = api_get('/mandates/current', $LH);
    is($mv->{spent_this_month_cents}, $price, '... and reserving its budget');
}


# The month's spending comes from a running total (mandate_spent) that
# triggers keep with the orders; a database whose totals are missing (from
# before the table) or wrong is summed again by agentshopctl init.
is_deeply([ spent_mismatches() ], [], "every mandate's running total equals the sum of its orders' budgets");
sql_write("DELETE FROM mandate_spent");
sql_write("INSERT INTO mandate_spent (mandate_id, month, cents) VALUES ('mdt_nosuchmandate', '2020-01', 5)");
ok(scalar(spent_mismatches()) >= 2, 'totals removed behind the service\'s back disagree with the orders');
ctl('init');
is_deeply([ spent_mismatches() ], [], 'agentshopctl init sums the orders again');
{
    my (undef, $mv) = api_get('/mandates/current', $LH);
    is($mv->{spent_this_month_cents}, $price, '... and the mandate reads the same spending as before');
}

done_testing();

sub stock_of {
    my ($sku, $offer) = @_;
    my ($r) = sql("SELECT stock FROM offers WHERE id = '$offer'");
    return $r->[0];
}
