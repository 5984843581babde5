# Product views from the search index (docs/search.md, "Product views"): the
# parts that only a catalogue load changes come from the index, the offers'
# stock and the questions from the database. Served by the virtual host of
# t/conf/vhost-views.conf.in over a generated catalogue of 1,500 products: at
# /v1 from the index, at /whole/v1 read whole from the database
# (AgentShopViewsFromIndex off). The two must give the same bytes for every
# product, with and without a device or other parameters, for an unknown sku,
# and after a stock change, a new question and a catalogue change.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use Apache::Test ();
use Apache::TestRequest ();
use AgentShop::Test;
use JSON::PP;

Apache::TestRequest::module('views');
$AgentShop::Test::HOSTPORT = Apache::TestRequest::hostport();
Apache::TestRequest::module('default');
$AgentShop::Test::DB = 'views';

# GET path at /v1 and at /whole/v1: (status and body of each).
sub both {
    my ($path) = @_;
    my ($a) = do { local $AgentShop::Test::BASE = '/v1'; api_get($path) };
    my ($b) = do { local $AgentShop::Test::BASE = '/whole/v1'; api_get($path) };
    return ($a->code . ' ' . $a->content, $b->code . ' ' . $b->content);
}

# Every path gives the same bytes both ways; the paths that differ, at most 3.
sub differing {
    my @bad;
    for my $path (@_) {
        my ($x, $y) = both($path);
        push @bad, "$path\n  index: " . substr($x, 0, 400) . "\n  whole: " . substr($y, 0, 400)
          if $x ne $y;
    }
    return @bad;
}

my @skus = map { $_->[0] } sql('SELECT sku FROM products ORDER BY id');
is(scalar @skus, 1500, 'the generated catalogue has 1,500 products');

# ---- every product, as it is ----
my @bad = differing(map { "/products/$_" } @skus);
is(scalar @bad, 0, 'every product\'s view is the same from the index and read whole')
  or diag(join "\n", @bad[0 .. ($#bad < 2 ? $#bad : 2)]);
my ($res, $v) = api_get("/products/$skus[0]");
is($res->code, 200, 'a view from the index is 200');
is($v->{sku}, $skus[0], '... of the product asked for');

# what the catalogue holds that the comparison covered
my ($contradicted) = map { $_->[0] } sql("SELECT sku FROM products WHERE verif_status = 'contradicted' LIMIT 1");
ok($contradicted, 'the catalogue has a contradicted product');
(undef, $v) = api_get("/products/$contradicted");
is($v->{verification}{status}, 'contradicted', '... its view says so');
my ($soldout) = map { $_->[0] } sql(
    "SELECT p.sku FROM products p JOIN offers o ON o.product_id = p.id WHERE o.stock = 0 "
  . "AND p.availability = 'in_stock' LIMIT 1");
ok($soldout, 'the catalogue has an offer out of stock');
(undef, $v) = api_get("/products/$soldout");
ok((grep { $_->{reason} eq 'Out of stock' } @{ $v->{offers}{ineligible} }),
   '... shown as ineligible for it');

# ---- parameters: a device (fits, does not fit, no row), deliver_by, weights ----
my @compat = sql(
    "SELECT p.sku, d.slug, c.fit_status FROM compat c JOIN products p ON p.id = c.product_id "
  . "JOIN devices d ON d.id = c.device_id ORDER BY c.product_id, c.device_id");
my @fits = grep { $_->[2] eq 'fits' } @compat;
my @nofit = grep { $_->[2] eq 'does_not_fit' } @compat;
ok(@fits && @nofit, 'the catalogue has parts that fit a device and parts that do not');
my @paths;
for my $i (0 .. 59) {
    push @paths, "/products/$fits[$i * @fits / 60][0]?device=$fits[$i * @fits / 60][1]";
    push @paths, "/products/$nofit[$i * @nofit / 60][0]?device=$nofit[$i * @nofit / 60][1]";
    push @paths, "/products/$skus[$i * 25]?device=$compat[0][1]";    # mostly no row for it
}
my $day = today_plus(3);
push @paths, map { ("/products/$skus[$_ * 50]?deliver_by=$day", "/products/$skus[$_ * 50 + 1]?weights=price:1",
                    "/products/$skus[$_ * 50 + 2]?weights=delivery:0.7,quality:0.3&deliver_by=$day") } 0 .. 29;
@bad = differing(@paths);
is(scalar @bad, 0, scalar(@paths) . ' views with a device, deliver_by or weights are the same both ways')
  or diag(join "\n", @bad[0 .. ($#bad < 2 ? $#bad : 2)]);
(undef, $v) = api_get("/products/$fits[0][0]?device=$fits[0][1]");
is($v->{fit_status}, 'fits', 'a view for a device the part fits says fits');
is(scalar @{ $v->{compatibility} }, 1, '... with the device\'s compatibility row');
(undef, $v) = api_get("/products/$nofit[0][0]?device=$nofit[0][1]");
is($v->{fit_status}, 'does_not_fit', 'and does_not_fit for one it does not');

# ---- what does not exist ----
@bad = differing('/products/NO-SUCH-SKU', "/products/NO-SUCH-SKU?device=$compat[0][1]",
                 "/products/$skus[0]?device=no-such-device", '/products/x');
is(scalar @bad, 0, 'an unknown sku, an unknown device and a bad sku answer the same both ways')
  or diag(join "\n", @bad);
($res) = api_get('/products/NO-SUCH-SKU');
is($res->code, 404, '... 404 for the unknown sku');

# ---- a stock change shows at once, the same both ways ----
my $sku = $fits[0][0];
my ($pid) = map { $_->[0] } sql("SELECT id FROM products WHERE sku = '$sku'");
my @offers = map { $_->[0] } sql("SELECT id FROM offers WHERE product_id = $pid ORDER BY id");
sql_write("UPDATE offers SET stock = 0 WHERE id = '$offers[0]'");
sql_write("UPDATE offers SET stock = 4321 WHERE id = '$offers[-1]'") if @offers > 1;
# the stock each view shows of an offer
sub stock_of {
    my ($body, $offer) = @_;
    my $x = eval { JSON::PP->new->decode($body) } or return 'not JSON';
    my ($o) = grep { $_->{offer_id} eq $offer } @{ $x->{offers}{ranked} }, @{ $x->{offers}{ineligible} };
    return $o ? $o->{stock} : 'absent';
}
my @after = bodies_everywhere("/products/$sku");
is(scalar(grep { stock_of($_, $offers[0]) eq '0' } @after), scalar @after,
   'an offer taken out of stock shows so at once on every child');
ok(@offers < 2 || @after == grep { stock_of($_, $offers[-1]) eq '4321' } @after,
   '... and a stock raised, its new level');
@bad = differing("/products/$sku", "/products/$sku?device=$fits[0][1]");
is(scalar @bad, 0, '... the same both ways') or diag(join "\n", @bad);

# ---- a new question shows at once, the same both ways ----
my ($user, $key) = new_agent();
my ($qres, $q) = post_json('/questions', agent_headers($key), { sku => $sku, question => "How heavy is it, view index $$?" });
is($qres->code, 200, 'a question asked') or diag($qres->content);
@after = bodies_everywhere("/products/$sku");
is(scalar(grep { index($_, "view index $$?") >= 0 } @after), scalar @after,
   '... is in the next view on every child');
@bad = differing("/products/$sku", "/products/$sku?device=$fits[0][1]");
is(scalar @bad, 0, '... the same both ways') or diag(join "\n", @bad);

# ---- the catalogue's part comes from the index, in every child ----
# A name changed behind the service's back, announced only to the views read
# whole (catalogue_version, their cache's key) and not to the index
# (search_catalogue): the views at /v1 still show the index's name, so they
# come from it, while /whole/v1 reads the new one. (An index without the
# views' parts, as background builds made until the index's format 4, sent
# every view to the database: this fails then.)
my $quiet = $skus[5];
my ($old_name) = map { $_->[0] } sql("SELECT name FROM products WHERE sku = '$quiet'");
sql_write("UPDATE products SET name = 'Quietly renamed $$' WHERE sku = '$quiet'");
sql_write("UPDATE meta SET value = value || '-quiet' WHERE key = 'catalogue_version'");
@after = bodies_everywhere("/products/$quiet");
is(scalar(grep { index($_, "Quietly renamed $$") < 0 && index($_, $old_name) >= 0 } @after),
   scalar @after, 'a view at /v1 takes the catalogue\'s part from the index, on every child');
($res, $v) = do { local $AgentShop::Test::BASE = '/whole/v1'; api_get("/products/$quiet") };
is($v->{name}, "Quietly renamed $$", '... while the view read whole shows the database\'s');
(my $q_name = $old_name) =~ s/'/''/g;
sql_write("UPDATE products SET name = '$q_name' WHERE sku = '$quiet'");

# ---- a catalogue change is seen through the catalogue version ----
my $next = is_pg() ? "CAST(CAST(value AS BIGINT) + 1 AS TEXT)" : "CAST(value AS INTEGER) + 1";
sql_write("UPDATE products SET name = name || ' (renamed $$)' WHERE id = $pid");
sql_write("UPDATE meta SET value = $next WHERE key = 'search_catalogue'");
sql_write("UPDATE meta SET value = value || '-renamed' WHERE key = 'catalogue_version'");    # text
@after = bodies_everywhere("/products/$sku");
is(scalar(grep { index($_, "(renamed $$)") >= 0 } @after), scalar @after,
   'a product renamed by a catalogue change shows so at once on every child');
@bad = differing(map { "/products/$_" } $sku, @skus[0 .. 99]);
is(scalar @bad, 0, '... and views are the same both ways after it') or diag(join "\n", @bad[0 .. ($#bad < 2 ? $#bad : 2)]);

done_testing();
