# Catalogue imports while clients search, view and buy (docs/catalogue.md,
# "Stock" and "When a change shows"): four clients search, view and order
# for a few seconds while imports change prices and set stock counts "as of"
# a time; no request fails, each price change is seen by every client within
# a second, and afterwards each counted offer's stock is exactly the count
# less what its orders took after the count: no order lost, none counted
# twice. The counts are what a merchant who counts right would report, so
# the demo's stock stays the sum of the stock and what orders hold
# (t/api/concurrency.t and crash.t check it later).
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use File::Temp qw(tempdir);
use Time::HiRes qw(time sleep);
use POSIX qw(strftime);
use JSON::PP;
use AgentShop::Test;
use Apache::Test ();
use Apache::TestRequest ();
use LWP::UserAgent ();

my $top = Apache::Test::vars('serverroot') . '/..';
my $dir = tempdir(CLEANUP => 1);
chmod 0755, $dir;
my $json = JSON::PP->new->utf8->canonical;
my %offer_rec;
{
    open my $fh, '<:raw', "$top/sql/demo/catalogue.jsonl" or die $!;
    while (<$fh>) {
        my $r = $json->decode($_);
        $offer_rec{ $r->{offer_id} } = $r if $r->{type} eq 'offer';
    }
}

sub import_recs {
    my (@recs) = @_;
    my $path = feed_file("$dir/feed-" . int(time * 1000) . "-$$.jsonl", @recs);
    my $cmd = ctl_argv('catalogue', 'import', $path);
    my $out = `$cmd 2>&1`;
    return ($? >> 8, $out);
}

# offers to buy (counted by the feed) and others whose price changes
my (@buy, @price);
my %taken;
for my $cat (qw(hand-soap batteries chargers-cables printer-ink)) {
    my ($v, $o) = buyable_offer(category => $cat, min_stock => 25, max_cents => 3000);
    next unless $o && !$taken{ $o->{offer_id} }++;
    push @buy, { sku => $v->{sku}, offer => $o->{offer_id}, name => $v->{name} };
}
for my $cat (qw(air-filters coffee-kitchen vacuum-parts)) {
    my ($v, $o) = buyable_offer(category => $cat, min_stock => 1, min_cents => 300);
    next unless $o && !$taken{ $o->{offer_id} }++;
    push @price, { sku => $v->{sku}, offer => $o->{offer_id}, price => $o->{price_cents}, stock => $o->{stock} };
}
ok(@buy >= 3 && @price >= 2, scalar(@buy) . ' offers to buy and count, ' . scalar(@price) . ' to change the price of');

my ($user, $key) = new_agent();
new_mandate($user, per_order => 500, monthly => 100000, confirm_above => 500);
my @skus = map { $_->{sku} } @{ demo_data('products') };

# ---- the load: four clients, each for 4 seconds ----
my $until = time + 6 * slow(); # the imports take longer under the sanitizers: as many of them
my @clients = map {
    my $c = $_;
    sub {
        my (@codes, @orders, $n);
        my $H = agent_headers($key);
        while (time < $until) {
            $n++;
            my $sku = $skus[ ($c * 37 + $n * 11) % @skus ];
            my ($res) = api_get("/products/$sku");
            push @codes, "view " . $res->code;
            ($res) = api_get('/search?q=' . (qw(soap filter battery cable toner descaler))[ $n % 6 ] . "&limit=20&offset=" . ($n % 3) * 20);
            push @codes, "search " . $res->code;
            next if $n % 3;
            my $b = $buy[ ($c + $n) % @buy ];
            my ($qres, $q) = post_json('/quotes', $H, { sku => $b->{sku}, offer_id => $b->{offer} });
            push @codes, "quote " . $qres->code;
            next unless $qres->code == 201;
            my ($ores, $o) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => "live-$$-$c-$n"),
                                       { quote_id => $q->{id}, reason => 'Catalogue import under load: a test order.' });
            push @codes, "order " . $ores->code;
            push @orders, $o->{id} if $ores->code == 201;
        }
        return (HTTP::Response->new(200), { codes => \@codes, orders => \@orders });
    }
} 0 .. 3;

# the imports, from a process of their own while the clients run
pipe(my $r, my $w) or die $!;
my $pid = fork // die "fork: $!";
if (!$pid) {
    close $r;
    my @report;
    sleep 0.5;
    my $round = 0;
    while (time < $until - 0.8) {
        $round++;
        # counts of the bought offers as of a second ago, as a merchant who
        # counts right would make them: the demo's stock less the units of
        # the orders placed by then that still held them then (so the
        # suite's other orders, and those of the clients before the count,
        # are in it); an import that took the count as the stock now would
        # lose the orders placed between the count and the import
        my $as_of = int(time) - 1;
        my %count = map {
            my $o = $_->{offer};
            my ($held) = sql("SELECT COALESCE(SUM(quantity), 0) FROM orders WHERE offer_id = '$o' AND created_at <= $as_of "
                             . "AND (status NOT IN ('cancelled', 'declined', 'expired') OR updated_at > $as_of)");
            ($o => $offer_rec{$o}{stock} - $held->[0])
        } @buy;
        my @counts = map { { %{ $offer_rec{ $_->{offer} } }, stock => ($count{ $_->{offer} } < 0 ? 0 : $count{ $_->{offer} }),
                             stock_as_of => strftime('%Y-%m-%dT%H:%M:%SZ', gmtime $as_of) } } @buy;
        my $p = $price[ $round % @price ];
        my $new = $p->{price} - $round;
        my ($rc, $out) = import_recs(@counts, { %{ $offer_rec{ $p->{offer} } }, price_cents => $new, stock => $p->{stock} });
        # a new connection for each view (so the children take turns),
        # each stamped when sent: the change is seen from the first fresh
        # answer on, and the last stale one says how long it took
        my $t0 = time;
        my ($seen, $last_stale, $fresh) = (undef, 0, 0);
        my $ua = LWP::UserAgent->new(keep_alive => 0, timeout => 10);
        my $url = 'http://' . Apache::TestRequest::hostport() . "/v1/products/$p->{sku}";
        while (!$rc && time - $t0 < 3 * slow() && $fresh < 12) {
            my $sent = time - $t0;
            my $res = $ua->get($url);
            my $v = eval { $json->decode($res->content) };
            my ($o) = $v ? grep { $_->{offer_id} eq $p->{offer} } @{ $v->{offers}{ranked} // [] } : ();
            if ($o && $o->{price_cents} == $new) { $fresh++ } else { $last_stale = $sent; $fresh = 0 }
        }
        $seen = $last_stale if $fresh >= 12;
        push @report, { rc => $rc, out => $rc ? $out : '', seen => $seen, as_of => $as_of, count => { map { $_->{offer_id} => $_->{stock} } @counts } };
        sleep 0.3;
    }
    print $w $json->encode(\@report);
    close $w;
    POSIX::_exit(0);
}
close $w;
my @done = concurrently(@clients);
my $report = do { local $/; $json->decode(<$r>) };
waitpid $pid, 0;

my @codes = map { @{ $_->{body}{codes} // [] } } @done;
my @orders = map { @{ $_->{body}{orders} // [] } } @done;
# an order or quote of an offer sold out meanwhile is answered 409: an answer, not a failure
my @bad = grep { !/ (200|201)$/ && !/^(quote|order) 409$/ } @codes;
ok(@codes > 50, scalar(@codes) . ' requests from four clients while the imports ran');
is(scalar @bad, 0, '... none failed') or diag explain [ @bad[0 .. ($#bad < 9 ? $#bad : 9)] ];
ok(@orders >= 3, scalar(@orders) . ' orders placed meanwhile');
ok(@$report >= 1, scalar(@$report) . ' import(s) while they ran (each a count of every bought offer and a price)');
is(scalar(grep { $_->{rc} } @$report), 0, '... each imported') or diag explain $report;
my @late = grep { !defined $_->{seen} || $_->{seen} >= slow() } @$report;
is(scalar @late, 0, '... each price change in the views of the children within a second under load (the last stale answer sent that soon after the import, then 12 fresh in a row)')
  or diag explain $report;

# ---- the stock afterwards: the last count less what was ordered after it ----
my $last = $report->[-1];
for my $b (@buy) {
    my ($row) = sql("SELECT o.stock, COALESCE((SELECT SUM(quantity) FROM orders WHERE offer_id = '$b->{offer}' AND created_at > $last->{as_of} AND status NOT IN ('cancelled', 'declined', 'expired')), 0), COALESCE((SELECT SUM(quantity) FROM orders WHERE offer_id = '$b->{offer}' AND created_at <= $last->{as_of} AND status IN ('cancelled', 'declined', 'expired') AND updated_at > $last->{as_of}), 0) FROM offers o WHERE o.id = '$b->{offer}'");
    my $c = $last->{count}{ $b->{offer} };
    is($row->[0], $c - $row->[1] + $row->[2],
       "$b->{offer}: stock $row->[0] = the count $c less the $row->[1] units ordered after it");
}
my ($neg) = sql('SELECT COUNT(*) FROM offers WHERE stock < 0');
is($neg->[0], 0, 'no offer below zero');
is(scalar(spent_mismatches()), 0, 'every mandate\'s running total still the sum of its orders');

# ---- back as the demo has them ----
my ($rc, $out) = import_recs(map { { %{ $offer_rec{ $_->{offer} } }, stock_as_of => '2000-01-01T00:00:00Z' } } @buy, @price);
is($rc, 0, 'the offers put back as the demo feed has them, counted before every order') or diag $out;
for my $b (@buy) {
    my ($row) = sql("SELECT o.stock + COALESCE((SELECT SUM(quantity) FROM orders WHERE offer_id = o.id AND status NOT IN "
                    . "('cancelled', 'declined', 'expired')), 0) FROM offers o WHERE o.id = '$b->{offer}'");
    is($row->[0], $offer_rec{ $b->{offer} }{stock}, "$b->{offer}: its stock plus what its orders hold is the demo's stock");
}

done_testing();
