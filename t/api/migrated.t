# A database made at schema version 2 (t/fixtures/make-v2.sh: the frozen
# schema, 11 products of the demo and what buying left in January 2026) and
# migrated by agentshopctl init before httpd started (scripts/apache-test.sh),
# on SQLite or PostgreSQL, serves as a new one does: search from the engine's
# index (built from product_rank without its dropped columns), product views,
# the compatible parts, the orders, returns and mandate it had, and new orders
# whose stock changes reach search. Served by the virtual host of
# t/conf/vhost-migrated.conf.in.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use JSON::PP;
use Apache::Test ();
use Apache::TestRequest ();
use AgentShop::Test;

Apache::TestRequest::module('migrated');
$AgentShop::Test::HOSTPORT = Apache::TestRequest::hostport();
Apache::TestRequest::module('default');
$AgentShop::Test::DB = 'migrated';

# The fixture's agent (t/fixtures/data-v2.sql): its active key, and the revoked one.
my $KEY = 'agentshop_sk_test_v2fixturekey00000000000000000000';
my $REVOKED = 'agentshop_sk_test_v2revokedkey00000000000000000000';
my $H = agent_headers($KEY);

sub skus { [ map { $_->{sku} } @{ $_[0] } ] }
sub one { my ($query) = @_; my @r = sql($query); return @r ? $r[0][0] : undef }

# ---- the migration ----
my $init = do {
    open my $fh, '<', Apache::Test::vars('serverroot') . '/var/init-migrated.json' or die $!;
    local $/;
    JSON::PP->new->decode(<$fh>);
};
is_deeply($init->{schema}, { from => 2, to => 8, action => 'migrated' },
          'agentshopctl init migrated the database from version 2 to 8');
is(one('SELECT version FROM schema_version'), 8, '... and recorded it');
is(one(is_pg() ? "SELECT COUNT(*) FROM information_schema.columns WHERE table_name = "
                . "'product_versions' AND column_name = 'seq'"
              : "SELECT COUNT(*) FROM pragma_table_info('product_versions') WHERE name = 'seq'"),
   1, '... product_versions has its live sequence column');
if (!is_pg()) { # PostgreSQL never moves it (schema.pgsql.sql)
    is(one("SELECT instr(sql, 'live_seq') > 0 FROM sqlite_master WHERE name = 'offers_version'"),
       1, '... and the offers trigger raises the live sequence');
}
is(one("SELECT COUNT(*) FROM orders WHERE id LIKE 'ord_v2_%'"), 3, '... with its three orders');

# ---- search ----
my ($res, $v) = api_get('/search');
is($res->code, 200, 'search: 200');
is($v->{count}, 9, '... 9 results: the 11 products but the 2 contradicted');
is_deeply([ sort map { $_->{sku} } @{ $v->{excluded} } ], [qw(HS-0006 VP-0005)],
          '... which are excluded, with their reasons')
  && like($v->{excluded}[0]{reason}, qr/contradict/, '... (measurements contradict the claims)');
is($v->{results}[-1]{sku}, 'HS-0003', '... the sold-out product last')
  && is($v->{results}[-1]{best_offer}, undef, '... with no best offer');
ok(!grep({ !$_->{best_offer} } @{ $v->{results} }[0 .. 7]), '... every other one with its best offer');

($res, $v) = api_get('/search?q=ecover');
is($res->code, 200, 'search?q=ecover: 200');
is_deeply(skus($v->{results}), [qw(HS-0012 HS-0013)], '... both Ecover soaps, the better scored first');
is($v->{results}[0]{match}, 'exact', '... matched exactly');
is($v->{results}[0]{best_offer}{stock}, 1, '... HS-0012 with its one unit left');

($res, $v) = api_get('/search?q=lavendr+soap');
is_deeply($v->{query}{corrected}, [ { from => 'lavendr', to => 'lavender' } ],
          'search?q=lavendr+soap: the typo corrected from the catalogue\'s words');
ok(grep({ $_->{sku} eq 'HS-0012' } @{ $v->{results} }), '... finding the lavender soap');

($res, $v) = api_get('/search?q=battery&device=dyson-v11-absolute');
is_deeply(skus($v->{results}), ['VP-0019'], 'search for a battery for the V11: the one that fits');
is_deeply(skus($v->{excluded}), ['VP-0023'], '... the one that does not fit excluded');
like($v->{excluded}[0]{reason}, qr/Does not fit/, '... saying so');

($res, $v) = api_get('/search?category=vacuum-parts&sort=price&verified_only=false');
is_deeply(skus($v->{results}), [qw(VP-0005 VP-0003 VP-0001 VP-0023 VP-0019)],
          'vacuum parts by price, contradicted ones included');

# ---- product views and compatible parts ----
($res, $v) = api_get('/products/HS-0012');
is($res->code, 200, 'a product view: 200');
is($v->{sku}, 'HS-0012', '... of the product');
is_deeply([ map { $_->{question} } @{ $v->{questions} } ], ['Is it vegan?'], '... with its question');
is(scalar @{ $v->{offers}{ranked} }, 1, '... and its offer');
($res, $v) = api_get('/products/VP-0019?device=dyson-v11-absolute');
is($v->{for_device}, 'dyson-v11-absolute', 'a product view for a device')
  && is($v->{fit_status}, 'fits', '... says it fits');

($res, $v) = api_get('/devices/dyson-v11-absolute/compatible');
is($res->code, 200, 'the V11\'s compatible parts: 200');
is_deeply([ map { [ $_->{part_type}, skus($_->{parts}) ] } @{ $v->{groups} } ],
          [ [ 'battery', ['VP-0019'] ], [ 'filter', [qw(VP-0003 VP-0001)] ] ],
          '... by part type, then score');
is_deeply([ sort @{ skus($v->{excluded}) } ], [qw(VP-0005 VP-0023)], '... what does not fit excluded');

# ---- what buying left ----
($res, $v) = api_get('/mandates/current', $H);
is($res->code, 200, 'the fixture agent\'s key works');
is($v->{id}, 'mdt_v2', '... its mandate the active one');
($res, $v) = api_get('/orders/ord_v2_1', agent_headers($REVOKED));
is_json_error($res, $v, 403, 'AGENT_UNIDENTIFIED', 'the revoked key does not');

($res, $v) = api_get('/orders/ord_v2_2', $H);
is($res->code, 200, 'the returned order: 200');
is($v->{status}, 'returned', '... returned');
is_deeply([ map { $_->{status} } @{ $v->{timeline} } ],
          [qw(awaiting_confirmation placed shipped delivered returned)], '... its timeline as it was');
is($v->{confirmation_id}, 'conf_v2_1', '... with its confirmation');
is($v->{right_item_guarantee}, JSON::PP::true, '... and its guarantee');
($res, $v) = api_get('/orders/ord_v2_3', $H);
is($v->{status}, 'cancelled', 'the cancelled order: cancelled');
($res) = api('GET', '/returns/ret_v2_1/label', $H);
is($res->code, 200, 'the return\'s label: 200');
like($res->content, qr/RTV2FIXTURE01/, '... with its tracking code');

# Placed in January and not read since: reading it ships and delivers it now.
($res, $v) = api_get('/orders/ord_v2_1', $H);
is($res->code, 200, 'the order placed in January: 200');
is($v->{status}, 'delivered', '... delivered by now');
is_deeply([ map { [ $_->{status}, $_->{at} ] } @{ $v->{timeline} } ],
          [ [ 'placed', '2026-01-10T10:01:00Z' ], [ 'shipped', '2026-01-10T11:01:00Z' ],
            [ 'delivered', '2026-01-14T12:00:00Z' ] ],
          '... shipped an hour after it was placed, delivered on its day');
is(one("SELECT cents FROM mandate_spent WHERE mandate_id = 'mdt_v2' AND month = '2026-01'"), 12602,
   'January\'s spending as it was');

# ---- buying now: the last unit of HS-0012 ----
my $n = 0;
sub place {
    my (%q) = @_;
    my ($r0, $q) = post_json('/quotes', $H, \%q);
    is($r0->code, 201, "a quote for $q{sku}") or diag $r0->content;
    my ($r1, $o) = post_json('/orders', agent_headers($KEY, 'Idempotency-Key' => "migrated-$$-" . ++$n),
                             { quote_id => $q->{id}, reason => 'Bought on the migrated database.' });
    is($r1->code, 201, "... and an order") or diag $r1->content;
    return $o;
}
my $rank_before = one("SELECT value FROM meta WHERE key = 'search_rank'");
my $o = place(sku => 'HS-0012', quantity => 1);
is($o->{status}, 'placed', '... placed');
is(one("SELECT stock FROM offers WHERE product_id = 4"), 0, 'the offer is sold out');
is(one("SELECT value FROM meta WHERE key = 'search_rank'"), $rank_before + 1, '... which moved the rank version');
is_deeply([ sql('SELECT buyable, version FROM product_rank WHERE product_id = 4') ],
          [ [ 0, $rank_before + 1 ] ], '... and HS-0012\'s rank row, in the same transaction');
($res, $v) = api_get('/search?q=ecover');
is_deeply(skus($v->{results}), [qw(HS-0013 HS-0012)], 'search?q=ecover: HS-0012 now after HS-0013')
  && is($v->{results}[1]{best_offer}, undef, '... with no best offer');
($res, $v) = api_get('/products/HS-0012');
is(scalar @{ $v->{offers}{ranked} }, 0, 'its view: no offer to rank');

# A part bought for the V11, shipped, returned as not fitting: refunded under
# the guarantee, the other filter that fits suggested (store->search).
$o = place(sku => 'VP-0003', quantity => 1, device => 'dyson-v11-absolute');
ctl('order', 'ship', $o->{id});
($res, $v) = post_json('/returns', agent_headers($KEY, 'Idempotency-Key' => "migrated-ret-$$"),
                       { order_id => $o->{id}, reason_code => 'does_not_fit' });
is($res->code, 201, 'a return: 201') or diag $res->content;
is($v->{refund_status}, 'refunded', '... refunded under the right-item guarantee');
is($v->{suggested_replacement}{sku}, 'VP-0001', '... the other filter that fits suggested');

($res, $v) = api_get('/mandates/current', $H);
is($v->{spent_this_month_cents}, 330, 'this month\'s spending: the soap, not the refunded filter');
is_deeply([ spent_mismatches() ], [], 'every running total agrees with its orders');

done_testing();
