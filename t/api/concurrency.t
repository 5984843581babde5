# Invariants under concurrent requests against httpd with several child
# processes (t/conf/extra.conf.in): a mandate's monthly limit is never
# exceeded (awaiting confirmations reserve budget), one Idempotency-Key makes
# at most one order, a quote becomes at most one order, stock never goes
# below zero. Each is checked in the responses and in the database.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use AgentShop::Test;

my $reason = 'Concurrent agent buying the best-ranked verified offer.';
my ($user, $key) = new_agent();
my $H = agent_headers($key);

sub quote {
    my (%b) = @_;
    my ($res, $v) = post_json('/quotes', $H, \%b);
    die 'quote failed: ' . $res->content unless $res->code == 201;
    return $v;
}

sub order_job {
    my ($qid, $ikey) = @_;
    return sub { post_json('/orders', agent_headers($key, 'Idempotency-Key' => $ikey),
                           { quote_id => $qid, reason => $reason }) };
}

sub codes { my %c; $c{ $_->{code} }++ for @_; join ' ', map { "$_:$c{$_}" } sort keys %c }

# ---- the monthly limit, with placed and awaiting orders mixed ----
my ($p, $off) = buyable_offer(min_stock => 30, max_cents => 5000);
ok($p, "an offer with stock to spare ($off->{offer_id}, $off->{stock} units)");
my $P = $off->{price_cents};
my $monthly = 12 * $P;
my $md = new_mandate($user, per_order => sprintf('%.2f', 3 * $P / 100),
                     monthly => sprintf('%.2f', $monthly / 100),
                     confirm_above => sprintf('%.2f', $P / 100));    # 2-unit orders need a human
my @qs = map { quote(sku => $p->{sku}, offer_id => $off->{offer_id}, quantity => ($_ % 2) + 1) } 1 .. 20;
# One 2-unit (awaiting) and one 1-unit (placed) order first, one after the
# other, so that both kinds hold budget whatever order the racers arrive in
# (six 2-unit racers arriving first would otherwise take all 12 units).
my ($n201, $n202) = (0, 0);
my $accepted = 0;
for my $i (0, 1) {
    my ($res, $v) = order_job($qs[$i]{id}, "month-$$-$i")->();
    is($res->code, $qs[$i]{quantity} == 2 ? 202 : 201,
       "a $qs[$i]{quantity}-unit order alone is " . ($qs[$i]{quantity} == 2 ? 'awaiting confirmation' : 'placed'));
    $accepted += $qs[$i]{total_cents};
}
my @r = concurrently(map { order_job($qs[$_]{id}, "month-$$-$_") } 2 .. $#qs);
unshift @r, undef, undef;
my @bad;
for my $i (2 .. $#r) {
    my $x = $r[$i];
    if ($x->{code} == 201 || $x->{code} == 202) {
        $accepted += $qs[$i]{total_cents};
        $x->{code} == 201 ? $n201++ : $n202++;
    } elsif (!($x->{code} == 403 && $x->{body}{error} eq 'MANDATE_INVALID')) {
        push @bad, "$x->{code} " . json_encode($x->{body});
    }
}
diag 'monthly: ' . codes(@r[2 .. $#r]);
is_deeply(\@bad, [], 'every refusal is 403 MANDATE_INVALID');
cmp_ok($accepted, '<=', $monthly, 'accepted orders stay within the monthly limit');
cmp_ok($accepted, '>', $monthly - 2 * $P, '... and the budget was used, not refused wholesale');
ok($n201 + $n202 > 0, "racing orders were accepted too ($n201 placed, $n202 awaiting)");
my ($row) = sql("SELECT COALESCE(SUM(budget_cents),0), COUNT(*) FROM orders WHERE mandate_id = '$md->{id}'");
is($row->[0], $accepted, 'the database holds exactly the accepted orders');
my (undef, $mv) = api_get('/mandates/current', $H);
is($mv->{spent_this_month_cents}, $accepted, 'the mandate view agrees');

# ---- one Idempotency-Key, many identical requests ----
my $q = quote(sku => $p->{sku}, offer_id => $off->{offer_id});
ctl('mandate', 'revoke', $md->{id});
new_mandate($user, per_order => 1000, monthly => 100000, confirm_above => 1000);
@r = concurrently(map { order_job($q->{id}, "same-$$") } 1 .. 12);
diag 'same key: ' . codes(@r);
my @first = grep { $_->{code} == 201 && !$_->{replayed} } @r;
is(scalar @first, 1, 'one Idempotency-Key: exactly one request placed the order');
# The key is claimed in the order's transaction: a request that comes while
# the first runs waits for it and replays its answer, never 409 IN_USE.
is_deeply([ map { "$_->{code} " . ($_->{body}{error} // '') } grep { !($_->{code} == 201 && $_->{replayed}) } @r ],
          [ '201 ' ], '... every other request waited for it and got its answer, replayed (201)');
my %ids = map { $_->{body}{id} => 1 } grep { $_->{code} == 201 } @r;
is(scalar keys %ids, 1, '... and every 201 names the same order');
is(scalar sql("SELECT id FROM orders WHERE quote_id = '$q->{id}'"), 1, '... which is the only one in the database');

# ---- one quote, many keys ----
$q = quote(sku => $p->{sku}, offer_id => $off->{offer_id});
@r = concurrently(map { order_job($q->{id}, "quote-$$-$_") } 1 .. 12);
diag 'same quote: ' . codes(@r);
is(scalar(grep { $_->{code} == 201 } @r), 1, 'one quote: exactly one order');
ok(!grep({ $_->{code} != 201 && !($_->{code} == 409 && $_->{body}{error} eq 'QUOTE_ALREADY_USED') } @r),
   '... every other request is 409 QUOTE_ALREADY_USED');
is(scalar sql("SELECT id FROM orders WHERE quote_id = '$q->{id}'"), 1, '... one order in the database');

# ---- stock never below zero ----
my ($sp, $soff) = buyable_offer(min_stock => 2, max_stock => 8);
ok($sp, "an offer with little stock ($soff->{offer_id}, $soff->{stock} units)");
my ($stock) = map { $_->[0] } sql("SELECT stock FROM offers WHERE id = '$soff->{offer_id}'");
my @sq = map { quote(sku => $sp->{sku}, offer_id => $soff->{offer_id}) } 1 .. $stock + 6;
@r = concurrently(map { order_job($sq[$_]{id}, "stock-$$-$_") } 0 .. $#sq);
diag 'stock: ' . codes(@r);
is(scalar(grep { $_->{code} == 201 || $_->{code} == 202 } @r), $stock, "exactly $stock orders got the $stock units");
ok(!grep({ $_->{code} != 201 && $_->{code} != 202 && !($_->{code} == 409 && $_->{body}{error} eq 'OUT_OF_STOCK') } @r),
   '... the rest are 409 OUT_OF_STOCK');
my ($left) = map { $_->[0] } sql("SELECT stock FROM offers WHERE id = '$soff->{offer_id}'");
is($left, 0, '... and the offer has 0 units left, not fewer');
my ($neg) = map { $_->[0] } sql('SELECT COUNT(*) FROM offers WHERE stock < 0');
is($neg, 0, 'no offer anywhere has negative stock');

# Every order in the database took its units: stock + units held = what the data file had
# (for the offers on sale: t/api/catalogue.t's new ones are withdrawn; the counts it imports
# are put back as of before any order, which subtracts every order's units again).
my %initial = map { my $o = $_; map { $_->{offer_id} => $_->{stock} } @{ $o->{offers} } } @{ demo_data('products') };
my %held = map { $_->[0] => $_->[1] } sql("SELECT offer_id, SUM(quantity) FROM orders WHERE status IN ('placed','awaiting_confirmation','shipped','delivered') GROUP BY offer_id");
my @off = grep { my ($id, $s) = @$_; $s + ($held{$id} // 0) != $initial{$id} } sql('SELECT id, stock FROM offers WHERE withdrawn_at IS NULL');
is_deeply([ map { $_->[0] } @off ], [], 'for every offer, stock plus the units of live orders equals its initial stock');

# mandate_spent, kept by triggers on orders, against the orders themselves.
is_deeply([ spent_mismatches() ], [], "every mandate's running total of a month equals the sum of its orders' budgets, after concurrent orders");

done_testing();
