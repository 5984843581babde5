# Two httpd nodes on one PostgreSQL (run by `make test-pg`; skipped on SQLite,
# whose file belongs to one host): with requests spread over both nodes the
# monthly limit, idempotency, single-use quotes and stock hold, and an order
# placed on one node is read, cancelled and returned through the other.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use JSON::PP ();
use Time::HiRes qw(time);
use AgentShop::Test;
use Apache::Test ();
use Apache::TestRequest ();

plan skip_all => 'several nodes need PostgreSQL (make test-pg)' unless is_pg();

# ---- node 2: the generated configuration on another port ----
my $logs = Apache::Test::vars('t_logs');
my $conf = Apache::Test::vars('t_conf') . '/httpd.conf';
my $port1 = (split /:/, Apache::TestRequest::hostport())[1];
my $port2 = $port1 + 17;
my $node2_conf = "$logs/node2.conf";
{
    open my $in, '<', $conf or die "$conf: $!";
    local $/;
    my $text = <$in>;
    $text =~ s/^Listen\s+\S+$/Listen 127.0.0.1:$port2/m or die 'no Listen line';
    $text =~ s/^ServerName\s+\S+$/ServerName localhost:$port2/m;
    $text =~ s/^PidFile\s+\S+$/PidFile $logs\/node2.pid/m or die 'no PidFile line';
    $text =~ s/^ErrorLog\s+\S+$/ErrorLog $logs\/node2_error_log/m;
    $text =~ s{(CustomLog\s+)\S+}{$1$logs/node2_access_log}g;
    # the virtual hosts of t/api/empty.t, migrated.t, search_rebuild.t and view_index.t listen on ports of node 1's
    for my $vhost (qw(empty migrated rebuild views)) {
        $text =~ s/^Include\s+"?\S*vhost-$vhost\.conf"?$//m or die "no Include of vhost-$vhost.conf";
    }
    # its own search index directory, as a node on another machine has (a
    # node empties its directory when it starts)
    $text .= "\nAgentShopSearchIndexDir $logs/node2-index\n";
    # the longest reuse of the database's versions: node 2 shows what it
    # wrote itself at once only because its commits make them stale
    $text .= "AgentShopVersionsMaxAge 1000\n";
    open my $out, '>', $node2_conf or die "$node2_conf: $!";
    print $out $text;
}
my $httpd = Apache::Test::vars('httpd');
system($httpd, '-f', $node2_conf, '-k', 'start') == 0 or BAIL_OUT("node 2 did not start");
my $node2 = "127.0.0.1:$port2";
my $up;
for (1 .. 50) {
    local $AgentShop::Test::HOSTPORT = $node2;
    last if ($up = (api_get('/search?limit=1'))[0]->code == 200);
    select undef, undef, undef, 0.2;
}
ok($up, "a second node answers on port $port2, on the same database");
END { system($httpd, '-f', $node2_conf, '-k', 'stop') if $node2_conf && -e "$logs/node2.pid" }

sub on2 { my ($code) = @_; local $AgentShop::Test::HOSTPORT = $node2; return $code->() }

my $reason = 'Two-node test: the best-ranked offer, bought through either node.';
my ($user, $key) = new_agent();
my $H = agent_headers($key);
new_mandate($user, per_order => 1000, monthly => 100000, confirm_above => 1000);

# ---- one order, three nodes' worth of handling ----
my ($p, $off) = buyable_offer(min_stock => 20, max_cents => 3000);
my (undef, $q) = post_json('/quotes', $H, { sku => $p->{sku}, offer_id => $off->{offer_id} });
my ($res, $o) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => "n$$-1"), { quote_id => $q->{id}, reason => $reason });
is($res->code, 201, 'an order placed on node 1');
my (undef, $seen) = on2(sub { api_get("/orders/$o->{id}", $H) });
is($seen->{id}, $o->{id}, '... is read through node 2');
($res) = on2(sub { post_json('/orders', agent_headers($key, 'Idempotency-Key' => "n$$-1"), { quote_id => $q->{id}, reason => $reason }) });
is($res->header('Idempotent-Replayed'), 'true', '... its Idempotency-Key replays on node 2');
my ($cres, $c) = on2(sub { post_json("/orders/$o->{id}/cancel", $H, '') });
is($c->{status}, 'cancelled', '... and is cancelled through node 2');
(undef, $seen) = api_get("/orders/$o->{id}", $H);
is($seen->{status}, 'cancelled', '... which node 1 sees');

my (undef, $q2) = on2(sub { post_json('/quotes', $H, { sku => $p->{sku}, offer_id => $off->{offer_id} }) });
my (undef, $o2) = on2(sub { post_json('/orders', agent_headers($key, 'Idempotency-Key' => "n$$-2"), { quote_id => $q2->{id}, reason => $reason }) });
ctl('order', 'ship', $o2->{id});
($res, my $r) = post_json('/returns', agent_headers($key, 'Idempotency-Key' => "n$$-r"), { order_id => $o2->{id}, reason_code => 'defective' });
is($res->code, 201, 'an order placed on node 2 is returned through node 1');
(undef, $seen) = on2(sub { api_get("/orders/$o2->{id}", $H) });
is($seen->{status}, 'returned', '... and node 2 sees it returned');

# ---- the invariants, with concurrent requests spread over both nodes ----
sub order_job {
    my ($i, $qid, $ikey) = @_;
    return sub {
        local $AgentShop::Test::HOSTPORT = $i % 2 ? $node2 : undef;
        post_json('/orders', agent_headers($key, 'Idempotency-Key' => $ikey), { quote_id => $qid, reason => $reason });
    };
}
revoke_active($user);
my $P = $off->{price_cents};
my $md = new_mandate($user, per_order => 1000, monthly => sprintf('%.2f', 10 * $P / 100), confirm_above => 1000);
my @qs = map { (post_json('/quotes', $H, { sku => $p->{sku}, offer_id => $off->{offer_id} }))[1] } 1 .. 16;
my @r = concurrently(map { order_job($_, $qs[$_]{id}, "m$$-$_") } 0 .. $#qs);
my $accepted = grep { $_->{code} == 201 } @r;
is($accepted, 10, 'the monthly limit admits exactly what it allows across both nodes');
ok(!grep({ $_->{code} != 201 && !($_->{code} == 403 && $_->{body}{error} eq 'MANDATE_INVALID') } @r), '... and refuses the rest');
my ($spent) = map { $_->[0] } sql("SELECT COALESCE(SUM(budget_cents), 0) FROM orders WHERE mandate_id = '$md->{id}'");
cmp_ok($spent, '<=', 10 * $P, '... the database agrees');

revoke_active($user);
new_mandate($user, per_order => 1000, monthly => 100000, confirm_above => 1000);
my (undef, $qk) = post_json('/quotes', $H, { sku => $p->{sku}, offer_id => $off->{offer_id} });
@r = concurrently(map { order_job($_, $qk->{id}, "same-$$") } 1 .. 12);
my %ids = map { $_->{body}{id} => 1 } grep { $_->{code} == 201 } @r;
is(scalar keys %ids, 1, 'one Idempotency-Key across both nodes: one order');
is(scalar sql("SELECT id FROM orders WHERE quote_id = '$qk->{id}'"), 1, '... one in the database');
ok(!grep({ $_->{code} != 201 && $_->{code} != 409 } @r), '... the others replayed or told it is in use');

my (undef, $qq) = post_json('/quotes', $H, { sku => $p->{sku}, offer_id => $off->{offer_id} });
@r = concurrently(map { order_job($_, $qq->{id}, "q$$-$_") } 1 .. 12);
is(scalar(grep { $_->{code} == 201 } @r), 1, 'one quote across both nodes: one order');

my ($sp, $soff) = buyable_offer(min_stock => 2, max_stock => 8);
my ($stock) = map { $_->[0] } sql("SELECT stock FROM offers WHERE id = '$soff->{offer_id}'");
my @sq = map { (post_json('/quotes', $H, { sku => $sp->{sku}, offer_id => $soff->{offer_id} }))[1] } 1 .. $stock + 6;
@r = concurrently(map { order_job($_, $sq[$_]{id}, "s$$-$_") } 0 .. $#sq);
is(scalar(grep { $_->{code} == 201 } @r), $stock, "stock across both nodes: exactly $stock orders");
my ($left) = map { $_->[0] } sql("SELECT stock FROM offers WHERE id = '$soff->{offer_id}'");
is($left, 0, '... none below zero');

# ---- a stock change made through one node, in both nodes' views ----
# The node that wrote shows it in every child's next view (node 2 reuses the
# versions for up to a second, so only its commit's raise can show it); the
# other node reads the database's versions again within
# AgentShopVersionsMaxAge (100 ms; docs/search.md, "Reading the versions").
sub offer_stock {
    my ($v, $id) = @_;
    for my $o (@{ $v->{offers}{ranked} || [] }, @{ $v->{offers}{ineligible} || [] }) {
        return $o->{stock} if $o->{offer_id} eq $id;
    }
    return undef;
}
my ($vp, $voff) = buyable_offer(min_stock => 3);
my $vsku = $vp->{sku};
my $before = $voff->{stock};
on2(sub { api_get("/products/$vsku") }) for 1 .. 4;    # both nodes have read the versions just now
api_get("/products/$vsku") for 1 .. 4;
my (undef, $vq) = on2(sub { post_json('/quotes', $H, { sku => $vsku, offer_id => $voff->{offer_id} }) });
($res) = on2(sub { post_json('/orders', agent_headers($key, 'Idempotency-Key' => "v$$"), { quote_id => $vq->{id}, reason => $reason }) });
is($res->code, 201, 'one unit ordered through node 2');
my $t0 = time;
my @stale = grep { my $v = eval { JSON::PP->new->decode($_) }; !defined $v || (offer_stock($v, $voff->{offer_id}) // -1) != $before - 1 }
  on2(sub { bodies_everywhere("/products/$vsku") });
is(scalar @stale, 0, "... every child of node 2 shows the stock it left ($before -> " . ($before - 1) . ") at once");
my ($shown, $waited);
for (1 .. 100) {
    my (undef, $v) = api_get("/products/$vsku");
    $waited = time - $t0;
    last if ($shown = (offer_stock($v, $voff->{offer_id}) // -1) == $before - 1);
    select undef, undef, undef, 0.01;
}
ok($shown && $waited < 1, '... and node 1 within a second') or diag sprintf 'waited %.3f s', $waited;

# ---- a catalogue import into the database, on both nodes ----
# agentshopctl writes to the database both nodes serve: each reads the new
# catalogue's number within AgentShopVersionsMaxAge (node 2: a second), shows
# the change in views at once and builds its own index for searches.
{
    my ($ip, $ioff) = buyable_offer(min_stock => 2, min_cents => 200);
    my ($line) = grep { /"offer_id":"\Q$ioff->{offer_id}\E"/ } do {
        open my $fh, '<', Apache::Test::vars('serverroot') . '/../sql/demo/catalogue.jsonl' or die $!;
        <$fh>;
    };
    my $rec = JSON::PP->new->decode($line);
    my $new_price = $ioff->{price_cents} - 11;
    my $new_sku = "ZZ-NODE-$$";
    my $file = Apache::Test::vars('t_logs') . "/nodes-feed-$$.jsonl";
    open my $out, '>', $file or die $!;
    print $out JSON::PP->new->canonical->encode({ %$rec, price_cents => $new_price, stock => $ioff->{stock} }), "\n";
    print $out JSON::PP->new->canonical->encode({ type => 'product', sku => $new_sku, name => "Wombatix Node Test $$",
        brand => 'Wombatix', category => $ip->{category}, part_type => $ip->{part_type}, description => 'A test product.',
        source => { url => 'https://x.example/p', checked_at => '2026-11-01T00:00:00Z', product_id => 'n1', availability => 'in_stock' } }), "\n";
    print $out JSON::PP->new->canonical->encode({ %$rec, offer_id => "$new_sku-o", sku => $new_sku, stock => 5 }), "\n";
    close $out;
    chmod 0644, $file;
    my $cmd = ctl_argv('catalogue', 'import', $file);
    my $sum = `$cmd 2>&1`;
    is($?, 0, 'a catalogue import into the nodes\' database') or diag $sum;
    my $t1 = time;
    my %seen;
    for (1 .. 300) {
        for my $n ([ 1, undef ], [ 2, $node2 ]) {
            next if $seen{ $n->[0] };
            local $AgentShop::Test::HOSTPORT = $n->[1] if $n->[1];
            my (undef, $v) = api_get("/products/$ip->{sku}");
            my ($o) = grep { $_->{offer_id} eq $ioff->{offer_id} } @{ $v->{offers}{ranked} || [] };
            my (undef, $s) = api_get('/search?q=wombatix');
            $seen{ $n->[0] } = time - $t1
              if $o && $o->{price_cents} == $new_price && grep { $_->{sku} eq $new_sku } @{ $s->{results} || [] };
        }
        last if keys %seen == 2;
        select undef, undef, undef, 0.01;
    }
    ok(defined $seen{1} && $seen{1} < slow(), 'node 1 shows the new price and finds the new product within a second')
      or diag explain \%seen;
    ok(defined $seen{2} && $seen{2} < 1.5 * slow(), 'node 2 (versions reused up to a second) within its second and the build')
      or diag explain \%seen;
    open $out, '>', $file or die $!;
    print $out JSON::PP->new->canonical->encode({ type => 'product', sku => $new_sku, withdrawn => JSON::PP::true }), "\n";
    print $out JSON::PP->new->canonical->encode({ %$rec, stock => $ioff->{stock} - 0 }), "\n";
    close $out;
    $sum = `$cmd 2>&1`;
    is($?, 0, '... and put back') or diag $sum;
}

done_testing();
