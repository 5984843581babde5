# The operator's daily commands of agentshopctl (docs/deploy.md, "Daily
# operations"): order list and return list as JSON Lines with their filters,
# order show, mandate show, user list, and offer set, whose price a new quote
# takes at once and the product view once the search index is built again,
# while a quote given before keeps its price. Bad input and a missing
# database are refused.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use File::Temp qw(tempdir);
use POSIX qw(strftime);
use JSON::PP;
use AgentShop::Test;
use Apache::Test ();

my $json = JSON::PP->new;
my $top = Apache::Test::vars('serverroot') . '/..';
my $dir = tempdir(CLEANUP => 1);

# The tool on the test database (ctl_argv) or on the command line given;
# returns (exit code, stdout, stderr).
sub run_cmd { run_capture($_[0], $dir) }
sub run_ctl { run_cmd(ctl_argv(@_)) }
# The same on a database file of this test's own (SQLite, whichever the suite's).
sub run_own {
    my ($db, @args) = @_;
    return run_cmd(join ' ', map { my $a = $_; $a =~ s/'/'\\''/g; "'$a'" }
                   "$top/bin/agentshopctl", '--driver', 'sqlite3', '--params', $db, @args);
}
# A list command's JSON Lines, each line decoded; dies when the command fails
# or a line is not one JSON object.
sub lines {
    my ($rc, $out, $err) = run_ctl(@_);
    die "agentshopctl @_ failed ($rc): $err" if $rc;
    return map { my $v = $json->decode($_); die "not an object: $_" unless ref $v eq 'HASH'; $v }
      split /\n/, $out;
}
sub ids { [ map { $_->{id} } @_ ] }
sub mine { my ($user, @l) = @_; grep { $_->{user_id} eq $user } @l }
my $ISO = qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

# ---- orders through the real httpd: one placed, one shipped, one returned ----
my ($user, $key) = new_agent();
my $H = agent_headers($key);
my $mandate = new_mandate($user, per_order => 1000, monthly => 10000, confirm_above => 1000);
# The best-ranked offer of its product, so that it is the best offer a search
# shows too, and stays so when it gets cheaper.
my ($p, $off);
for my $d (@{ demo_data('products') }) {
    my (undef, $v) = api_get("/products/$d->{sku}");
    my $o = $v && $v->{offers} ? $v->{offers}{ranked}[0] : undef;
    next unless $o && $o->{stock} >= 10 && $o->{price_cents} <= 3000 && $o->{price_cents} > 200;
    ($p, $off) = ($v, $o);
    last;
}
ok($off, "an offer to buy: $off->{offer_id}") or BAIL_OUT('no buyable offer');
my $n = 0;
sub quote {
    my (%o) = @_;
    my ($res, $q) = post_json('/quotes', $H, { sku => $p->{sku}, offer_id => $off->{offer_id}, %o });
    die 'quote failed: ' . $res->content unless $res->code == 201;
    return $q;
}
sub order_of {
    my ($q) = @_;
    my ($res, $v) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => "ops$$-" . ++$n),
                              { quote_id => $q->{id}, reason => 'Order for the agentshopctl daily commands test.' });
    die 'order failed: ' . $res->content unless $res->code == 201;
    return $v;
}
my $a = order_of(quote(quantity => 2));
sleep 1; # the others are created at least a second later: --since between them
my $b = order_of(quote());
my $c = order_of(quote());
ctl('order', 'ship', $_->{id}) for $b, $c;
my ($res, $ret) = post_json('/returns', agent_headers($key, 'Idempotency-Key' => "ops-ret$$"),
                            { order_id => $b->{id}, reason_code => 'defective', note => 'It rattles.' });
is($res->code, 201, 'a return of the shipped order b') or diag $res->content;
is($ret->{refund_status}, 'pending_inspection', '... waiting for inspection');

# ---- order list ----
my @all = lines('order', 'list');
my @ours = mine($user, @all);
is(scalar(@ours), 3, 'order list: JSON Lines with the three orders of the user');
is($ours[0]{id}, $a->{id}, '... the first one placed first (oldest first)');
is_deeply([ sort @{ ids(@ours) } ], [ sort map { $_->{id} } $a, $b, $c ], '... and the other two');
is_deeply([ map { $_->{created_at} } @all ], [ sort map { $_->{created_at} } @all ],
          '... every order of the database by the time it was created');
my ($la) = grep { $_->{id} eq $a->{id} } @ours;
is_deeply({ map { $_ => $la->{$_} } qw(status user_id mandate_id offer_id sku name quantity unit_price_cents total_cents) },
          { status => 'placed', user_id => $user, mandate_id => $mandate->{id}, offer_id => $off->{offer_id},
            sku => $p->{sku}, name => $p->{name}, quantity => 2, unit_price_cents => $off->{price_cents},
            total_cents => 2 * $off->{price_cents} },
          '... each with its status, user, mandate, offer, product, quantity and money');
is($la->{created_at}, $a->{created_at}, '... created_at as the API shows it');
like($la->{updated_at}, $ISO, '... updated_at in ISO UTC too');
like($la->{agent}, qr/^test-agent/, '... and the agent that placed it');
my %status = map { $_->{id} => $_->{status} } @ours;
is_deeply(\%status, { $a->{id} => 'placed', $b->{id} => 'returned', $c->{id} => 'shipped' },
          '... their statuses now: placed, returned, shipped');
my ($lc) = grep { $_->{id} eq $c->{id} } @ours;
cmp_ok($lc->{updated_at}, 'ge', $lc->{created_at}, '... a shipped one changed after it was created');

my @placed = lines('order', 'list', '--status', 'placed');
ok(@placed && !grep({ $_->{status} ne 'placed' } @placed), '--status placed: placed orders only');
is_deeply(ids(mine($user, @placed)), [ $a->{id} ], '... of this user, a');
is_deeply(ids(mine($user, lines('order', 'list', '--status', 'returned'))), [ $b->{id} ],
          '--status returned: b');
is_deeply([ sort @{ ids(mine($user, lines('order', 'list', '--since', $b->{created_at}))) } ],
          [ sort $b->{id}, $c->{id} ], '--since the time b was created: b and c, not a created before');
is_deeply(ids(mine($user, lines('order', 'list', '--since', $b->{created_at}, '--status', 'shipped'))),
          [ $c->{id} ], '--since with --status shipped: c');
is(scalar(mine($user, lines('order', 'list', '--since', substr($a->{created_at}, 0, 10)))), 3,
   '--since the day (yyyy-mm-dd): all three');
my $tomorrow = strftime('%Y-%m-%d', gmtime(time + 86400));
is(scalar(lines('order', 'list', '--since', $tomorrow)), 0, '--since tomorrow: no line at all');

# ---- order show ----
my ($rc, $out, $err) = run_ctl('order', 'show', $b->{id});
is($rc, 0, 'order show') or diag $err;
my $show = $json->decode($out);
my (undef, $api) = api_get("/orders/$b->{id}", $H);
is_deeply({ map { $_ => $show->{$_} } qw(id status sku name quantity total_cents timeline receipt) },
          { map { $_ => $api->{$_} } qw(id status sku name quantity total_cents timeline receipt) },
          '... the order as the API shows it, timeline and receipt included');
is_deeply([ map { $_->{status} } @{ $show->{timeline} } ], [qw(placed shipped returned)],
          '... every step: placed, shipped, returned');
is($show->{shipped_at}, $api->{shipped_at}, '... when it shipped');
is($show->{user_id}, $user, '... whose it is');
is($show->{return}{id}, $ret->{id}, '... and its return');
is($show->{return}{refund_status}, 'pending_inspection', '... waiting for inspection');
($rc, $out, $err) = run_ctl('order', 'show', $a->{id});
is($json->decode($out)->{return}, undef, 'an order without a return: return null');

# ---- return list ----
my @returns = mine($user, lines('return', 'list'));
is(scalar(@returns), 1, 'return list: the return of the user');
is_deeply({ map { $_ => $returns[0]{$_} } qw(id order_id order_status sku reason_code note refund_status refund_cents) },
          { id => $ret->{id}, order_id => $b->{id}, order_status => 'returned', sku => $p->{sku},
            reason_code => 'defective', note => 'It rattles.', refund_status => 'pending_inspection',
            refund_cents => $ret->{refund_cents} },
          '... with its order, reason, note and refund');
like($returns[0]{created_at}, $ISO, '... and when it was made');
is(scalar(mine($user, lines('return', 'list', '--status', 'pending_inspection'))), 1,
   '--status pending_inspection: it');
is(scalar(mine($user, lines('return', 'list', '--status', 'refunded'))), 0, '--status refunded: not it');
is(scalar(mine($user, lines('return', 'list', '--since', $tomorrow))), 0, '--since tomorrow: not it');

# ---- mandate show ----
($rc, $out, $err) = run_ctl('mandate', 'show', $mandate->{id});
is($rc, 0, 'mandate show') or diag $err;
my $ms = $json->decode($out);
my (undef, $cur) = api_get('/mandates/current', $H);
is($ms->{id}, $mandate->{id}, '... the mandate');
is($ms->{monthly_limit_cents}, 1000000, '... with its limits');
is($ms->{month}, strftime('%Y-%m', gmtime), '... this month (UTC)');
is($ms->{spent_this_month_cents}, $cur->{spent_this_month_cents}, '... spent as the API counts it')
  and cmp_ok($ms->{spent_this_month_cents}, '>=', $a->{total_cents} + $c->{total_cents}, '... a and c in it');
is($ms->{remaining_this_month_cents}, $cur->{remaining_this_month_cents}, '... and what is left');

# ---- user list ----
my $k2 = ctl('key', 'create', '--user', $user);
ctl('key', 'revoke', $k2->{id});
my ($u) = grep { $_->{user_id} eq $user } lines('user', 'list');
is_deeply($u, { user_id => $user, active_keys => 1, keys => 2, active_mandates => 1, mandates => 1,
                orders => 3, passkeys => 0 },
          'user list: the user, its keys (one revoked), mandate and orders');

# ---- offer set ----
my $old = $off->{price_cents};
my $new = $old - 100;
my $eur = sprintf '%d.%02d', int($new / 100), $new % 100;
is(search_offer()->{offer_id}, $off->{offer_id}, 'the offer is its product\'s best in a search');
my $q_before = quote();
is($q_before->{unit_price_cents}, $old, "a quote before the change: $old cents");
my $catalogue = (sql("SELECT value FROM meta WHERE key = 'search_catalogue'"))[0][0];
my $set = ctl('offer', 'set', $off->{offer_id}, '--price-eur', $eur);
is($set->{price_cents}, $new, "offer set --price-eur $eur: the offer at $new cents");
is($set->{before}{price_cents}, $old, '... saying what it was');
is_deeply([ @$set{qw(id sku retail_price_cents)} ], [ $off->{offer_id}, $p->{sku}, $off->{retail_price_cents} ],
          '... the offer, its product and retail price');
isnt((sql("SELECT value FROM meta WHERE key = 'search_catalogue'"))[0][0], $catalogue,
     '... a new catalogue number, for the search index to be built again');
is(quote()->{unit_price_cents}, $new, 'a new quote takes the new price at once');
my $kept = order_of($q_before);
is($kept->{unit_price_cents}, $old, 'the quote given before keeps its price when ordered');
my ($lk) = grep { $_->{id} eq $kept->{id} } lines('order', 'list', '--status', 'placed');
is($lk->{unit_price_cents}, $old, '... and order list says so');

# The product view comes from the search index: it shows the price once the
# index of the new catalogue is built (in the background; a few seconds).
sub view_offer {
    my (undef, $v) = api_get("/products/$p->{sku}");
    my ($o) = grep { $_->{offer_id} eq $off->{offer_id} }
      @{ $v->{offers}{ranked} // [] }, @{ $v->{offers}{ineligible} // [] };
    return $o // {};
}
# The product's best offer in a search of its category and part type.
sub search_offer {
    my (undef, $v) = api_get("/search?limit=100&category=$p->{category}&part_type=$p->{part_type}");
    my ($r) = grep { $_->{sku} eq $p->{sku} } @{ $v->{results} // [] };
    return $r && $r->{best_offer} ? $r->{best_offer} : {};
}
# The field of the offer that read shows, once it is `want` (at most 30 s).
sub shown {
    my ($read, $field, $want) = @_;
    for (1 .. 300) {
        my $o = $read->();
        return $o->{$field} if ($o->{$field} // -1) == $want;
        select(undef, undef, undef, 0.1);
    }
    return $read->()->{$field};
}
sub view_until { shown(\&view_offer, @_) }
is(view_until('price_cents', $new), $new, '... the product view shows the new price');
is(shown(\&search_offer, 'price_cents', $new), $new, '... and a search, once the index caught up');

($rc, $out, $err) = run_ctl('offer', 'set', $off->{offer_id}, '--price-eur',
                            sprintf('%d.%02d', int(($off->{retail_price_cents} + 1) / 100), ($off->{retail_price_cents} + 1) % 100));
ok($rc == 1 && $out eq '' && $err =~ /above the retail price of offer \Q$off->{offer_id}\E/,
   'a price above the retail price is refused') or diag "$rc $err";
is((sql("SELECT price_cents FROM offers WHERE id = '$off->{offer_id}'"))[0][0], $new, '... and changes nothing');

my $stock = (sql("SELECT stock FROM offers WHERE id = '$off->{offer_id}'"))[0][0];
$set = ctl('offer', 'set', $off->{offer_id}, '--stock', $stock + 7);
is_deeply([ $set->{stock}, $set->{price_cents} ], [ $stock + 7, $new ], 'offer set --stock: the stock, the price kept');
is(view_until('stock', $stock + 7), $stock + 7, '... in the product view');
$set = ctl('offer', 'set', $off->{offer_id}, '--price-eur', sprintf('%d.%02d', int($old / 100), $old % 100),
           '--stock', $stock);
is_deeply([ $set->{price_cents}, $set->{stock} ], [ $old, $stock ], 'both at once: back as they were');
is(view_until('price_cents', $old), $old, '... and the view follows');
is(shown(\&search_offer, 'price_cents', $old), $old, '... and the search');

# ---- bad input: a message and exit code 1, nothing printed ----
for my $case (
    [ [qw(order list --status lost)], qr/order list: --status must be awaiting_confirmation, placed, .* or returned, not 'lost'/ ],
    [ [qw(order list --since 2026-02-30)], qr/--since must be a date yyyy-mm-dd or a UTC time yyyy-mm-ddThh:mm:ssZ, not '2026-02-30'/ ],
    [ [qw(order list --since 2026-01-01T10:00:00)], qr/--since must be a date/ ],
    [ [qw(order list --status)], qr/--status needs a value/ ],
    [ [qw(order list --user x)], qr/unknown argument '--user'/ ],
    [ [qw(order show ord_nosuchorder)], qr/order show: there is no order 'ord_nosuchorder'/ ],
    [ [qw(order show)], qr/usage: order show ID/ ],
    [ [qw(return list --status lost)], qr/return list: --status must be refunded or pending_inspection, not 'lost'/ ],
    [ [qw(return)], qr/usage: return list/ ],
    [ [qw(mandate show mdt_nosuch)], qr/mandate show: there is no mandate 'mdt_nosuch'/ ],
    [ [qw(user list extra)], qr/usage: user list/ ],
    [ [ 'offer', 'set', $off->{offer_id} ], qr/give --price-eur, --stock or both/ ],
    [ [ 'offer', 'set', $off->{offer_id}, '--price-eur', '12.345' ], qr/at most two decimals .* not '12.345'/ ],
    [ [ 'offer', 'set', $off->{offer_id}, '--price-eur', '0' ], qr/--price-eur must be an amount in euros above 0/ ],
    [ [ 'offer', 'set', $off->{offer_id}, '--price-eur', '-5' ], qr/--price-eur must be/ ],
    [ [ 'offer', 'set', $off->{offer_id}, '--price-eur', '1000000.01' ], qr/at most 1000000/ ],
    [ [ 'offer', 'set', $off->{offer_id}, '--stock', '1000001' ], qr/--stock must be a whole number from 0 to 1000000, not '1000001'/ ],
    [ [ 'offer', 'set', $off->{offer_id}, '--stock', '2.5' ], qr/--stock must be a whole number/ ],
    [ [qw(offer set off_nosuch --stock 1)], qr/offer set: there is no offer 'off_nosuch'/ ],
    [ [qw(offer set --stock 1)], qr/usage: offer set OFFER/ ],
    [ [qw(offer show x)], qr/usage: offer set OFFER/ ]) {
    my ($args, $msg) = @$case;
    ($rc, $out, $err) = run_ctl(@$args);
    ok($rc == 1 && $out eq '' && $err =~ $msg, "@$args: refused with a message") or diag "rc=$rc out=$out err=$err";
}
is((sql("SELECT price_cents || ' ' || stock FROM offers WHERE id = '$off->{offer_id}'"))[0][0], "$old $stock",
   '... and the offer unchanged by any of them');

# ---- a missing database is refused, and not created ----
for my $cmd ([qw(order list)], [qw(order show ord_x)], [qw(return list)], [qw(mandate show mdt_x)],
             [qw(user list)], [qw(offer set off_x --stock 1)]) {
    ($rc, $out, $err) = run_own("$dir/none.db", @$cmd);
    ok($rc != 0 && $out eq '' && $err =~ /there is no database \Q$dir\/none.db\E/ && !-e "$dir/none.db",
       "@$cmd: a missing database is refused and left uncreated") or diag "rc=$rc err=$err";
}

# ---- a database of its own: empty lists, and a withdrawn offer ----
my $own = "$dir/own.db";
($rc, $out, $err) = run_own($own, 'init', '--demo');
is($rc, 0, 'a demo database of the test\'s own') or diag $err;
for my $cmd ([qw(order list)], [qw(return list)], [qw(user list)]) {
    ($rc, $out, $err) = run_own($own, @$cmd);
    ok($rc == 0 && $out eq '' && $err eq '', "@$cmd without any: nothing, exit 0") or diag "rc=$rc out=$out err=$err";
}
my $withdrawn = `sqlite3 '$own' "SELECT id FROM offers ORDER BY id LIMIT 1"`;
chomp $withdrawn;
system('sqlite3', $own, "UPDATE offers SET withdrawn_at = '2026-01-01T00:00:00Z' WHERE id = '$withdrawn'") == 0 or die;
my $before = `sqlite3 '$own' "SELECT price_cents || ' ' || stock FROM offers WHERE id = '$withdrawn'"`;
($rc, $out, $err) = run_own($own, 'offer', 'set', $withdrawn, '--stock', 5);
ok($rc == 1 && $out eq '' && $err =~ /offer set: offer \Q$withdrawn\E is withdrawn/, 'a withdrawn offer is refused')
  or diag "rc=$rc err=$err";
is(`sqlite3 '$own' "SELECT price_cents || ' ' || stock FROM offers WHERE id = '$withdrawn'"`, $before, '... unchanged');

done_testing();
