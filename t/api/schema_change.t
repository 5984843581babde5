# A change of the database's schema while httpd serves (a migration run by
# agentshopctl, an index an administrator adds) must not take the shop down.
# apr_dbd_sqlite3 prepares with the legacy sqlite3_prepare, whose statements
# SQLite never prepares again: before the module prepared them anew, every
# pooled connection answered 503 to every request after such a change, until
# httpd restarted. Reads, views and orders on connections of several child
# processes are checked after an index is added and after it is dropped.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use AgentShop::Test;

my ($user, $key) = new_agent();
my $H = agent_headers($key);
new_mandate($user, per_order => 1000, monthly => 100000, confirm_above => 1000);

# Every kind of statement on many connections at once: searches, a view, the
# mandate, and a quote and an order (a write transaction) per job.
my $round = 0;
sub burst {
    my ($what) = @_;
    $round++;
    # an offer with units for all 12 orders (other scripts buy too)
    my ($p, $off) = buyable_offer(min_stock => 15, max_cents => 5000);
    ok($p, "$what: an offer to buy ($off->{offer_id}, $off->{stock} units)");
    my @jobs;
    for my $i (1 .. 12) {
        push @jobs, sub { api_get('/search?q=' . ($i % 2 ? 'soap' : 'filter') . '&limit=5', $H) };
        push @jobs, sub { api_get("/products/$p->{sku}", $H) };
        push @jobs, sub { api_get('/mandates/current', $H) };
        push @jobs, sub {
            my ($res, $q) = post_json('/quotes', $H, { sku => $p->{sku}, offer_id => $off->{offer_id} });
            return ($res, $q) unless $res->code == 201;
            post_json('/orders', agent_headers($key, 'Idempotency-Key' => "schema-$$-$round-$i"),
                      { quote_id => $q->{id}, reason => 'Buying after the schema of the shop changed.' });
        };
    }
    my @r = concurrently(@jobs);
    my @bad = map { "$_->{code} " . json_encode($_->{body}) } grep { $_->{code} >= 300 } @r;
    is_deeply(\@bad, [], "$what: every search, view, mandate read, quote and order answered (" .
              scalar(@r) . ' requests)');
    my $orders = grep { $_->{code} == 201 && exists $_->{body}{status} } @r;
    is($orders, 12, "$what: the 12 orders were placed");
}

burst('before any change');
sql_write('CREATE INDEX test_schema_change ON offers (product_id, stock)');
burst('after an index was added behind the service');
burst('... and again');
sql_write('DROP INDEX test_schema_change');
burst('after it was dropped');
my ($neg) = map { $_->[0] } sql('SELECT COUNT(*) FROM offers WHERE stock < 0');
is($neg, 0, 'no offer has negative stock');

done_testing();
