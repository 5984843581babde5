# GET /v1/search: filters, verified_only and `excluded`, sorts, weights, paging,
# device resolution and validation of every parameter.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use AgentShop::Test;

my $products = demo_data('products');
my %by_sku = map { $_->{sku} => $_ } @$products;

# Everything, in pages of 100.
sub search_all {
    my ($query) = @_;
    my (@results, $first);
    for (my $off = 0;; $off += 100) {
        my ($res, $v) = api_get("/search?$query&limit=100&offset=$off");
        die "search $query: " . $res->code . ' ' . $res->content unless $res->code == 200;
        $first //= $v;
        push @results, @{ $v->{results} };
        last if $off + 100 >= $v->{count};
    }
    return ($first, @results);
}

my ($v, @all) = search_all('q=');
for my $f (qw(results excluded ranking_policy count weights postcode device)) {
    ok(exists $v->{$f}, "search response has $f");
}
like($v->{ranking_policy}, qr/no paid placement/i, 'ranking policy states there is no paid placement');
my @contra = grep { product_is_contradicted($_) } @$products;
my %excluded = map { $_->{sku} => $_ } @{ $v->{excluded} };
ok(@contra >= 5, 'the demo data has contradicted products');
is(scalar(grep { $excluded{ $_->{sku} } } @contra), scalar @contra,
   'every contradicted product is in excluded by default');
ok(!grep({ product_is_contradicted($by_sku{ $_->{sku} }) } @all), '... and none is in the results');
ok(!grep({ !length($_->{reason}) || !$_->{name} } @{ $v->{excluded} }), 'each exclusion has a name and a reason');
like($excluded{ $contra[0]{sku} }{reason}, qr/contradict/i, '... which says the measurements contradict the claims');
is($v->{count}, scalar @all, 'count is the number of results');
is($v->{count} + scalar @{ $v->{excluded} }, scalar @$products, 'results and excluded cover the whole catalogue');

my ($v2, @all2) = search_all('verified_only=false');
is(scalar @{ $v2->{excluded} }, 0, 'verified_only=false excludes nothing');
is($v2->{count}, scalar @$products, '... and lists every product');
my %status = map { $_->{sku} => $_->{verification_status} } @all2;
is(scalar(grep { $status{ $_->{sku} } ne expected_status($_) } @$products), 0,
   'verification_status of every summary matches the data');

# Summary fields and best_offer.
my $s = $all[0];
for my $f (qw(sku name brand category part_type verification_status best_offer)) {
    ok(exists $s->{$f}, "summary has $f");
}
ok(!exists $s->{fit_status}, 'no fit_status without a device');

# Free text over name, brand and description, through the index.
my ($p) = grep { $_->{brand} =~ /^[A-Za-z]{4,}$/ } @$products;
my ($res, $t) = api_get('/search?verified_only=false&limit=100&q=' . lc $p->{brand});
my @want = grep { "$_->{name} $_->{brand} $_->{description}" =~ /\b\Q$p->{brand}\E/i } @$products;
ok((grep { $_->{sku} eq $p->{sku} } @{ $t->{results} }), "q=$p->{brand} finds $p->{sku}");
is($t->{count}, scalar @want, "q=$p->{brand} matches exactly the products that mention it");
my @words = grep { length > 4 && /^[A-Za-z]+$/ } split /\s+/, $p->{name};
if (@words) {
    ($res, $t) = api_get("/search?verified_only=false&q=$p->{brand}+" . uc $words[0]);
    ok((grep { $_->{sku} eq $p->{sku} } @{ $t->{results} }), 'two words, any case, still find it');
} else { fail("$p->{sku}'s name has a second word to search for (the demo data is fixed)") }
($res, $t) = api_get('/search?q=zzqqxxnotaword');
is($t->{count}, 0, 'a word in no product finds nothing');
is_deeply($t->{results}, [], '... results is an empty array');

# Filters.
for my $cat (qw(hand-soap printer-ink batteries)) {
    my ($x, @r) = search_all("category=$cat&verified_only=false");
    my $n = grep { $_->{category} eq $cat } @$products;
    is($x->{count}, $n, "category=$cat matches $n products");
    ok(!grep({ $_->{category} ne $cat } @r), '... all of that category');
}
my ($x, @r) = search_all('part_type=toner&verified_only=false');
is($x->{count}, scalar(grep { $_->{part_type} eq 'toner' } @$products), 'part_type=toner filter');
($x, @r) = search_all('max_price=10');
ok(@r && !grep({ $_->{best_offer} && $_->{best_offer}{price_cents} > 1000 } @r), 'max_price=10: no best offer above 10 EUR');
ok(!grep({ !$_->{best_offer} } @r), '... and every result has a buyable offer');
ok((grep { $_->{reason} =~ /max_price/ } @{ $x->{excluded} }), '... products over the price are excluded with the reason');
my $soon = today_plus(1);
($x, @r) = search_all("deliver_by=$soon");
ok(!grep({ $_->{best_offer}{delivery_by} gt $soon } @r), "deliver_by=$soon: every best offer arrives in time");
ok((grep { $_->{reason} =~ /delivers by/ } @{ $x->{excluded} }), '... late products are excluded with the reason');
my $m = demo_data('merchants')->[0];
($x, @r) = search_all("merchant=$m->{id}");
ok(@r && !grep({ $_->{best_offer} && $_->{best_offer}{merchant}{id} ne $m->{id} } @r),
   "merchant=$m->{id}: every best offer is from that merchant");
($res, $t) = api_get('/search?merchant=' . uri_escape_utf8(uc $m->{name}));
is($res->code, 200, 'a merchant can be named by its name, in any case');

# Sorts.
sub sorted_by {
    my ($key, $desc, @list) = @_;
    for my $i (1 .. $#list) {
        my ($a, $b) = ($key->($list[ $i - 1 ]), $key->($list[$i]));
        next unless defined $a && defined $b;
        return 0 if $desc ? $a < $b : $a > $b;
    }
    return 1;
}
my @buy;
(undef, @buy) = search_all('sort=price');
ok(sorted_by(sub { $_[0]{best_offer} && $_[0]{best_offer}{price_cents} }, 0, @buy), 'sort=price: cheapest first');
(undef, @buy) = search_all('sort=delivery');
ok(sorted_by(sub { $_[0]{best_offer} && $_[0]{best_offer}{delivery_days} }, 0, @buy), 'sort=delivery: soonest first');
(undef, @buy) = search_all('sort=return_rate');
my @with = grep { $_->{best_offer} } @buy;
ok(sorted_by(sub { $_[0]{return_rate} }, 0, @with), 'sort=return_rate: lowest return rate first');
(undef, @buy) = search_all('sort=score');
ok(sorted_by(sub { $_[0]{best_offer} && $_[0]{best_offer}{score} }, 1, @buy), 'sort=score: highest score first');
my @nobest = grep { !$_->{best_offer} } @buy;
ok(!@nobest || !grep({ $_->{best_offer} } @buy[ $#buy - $#nobest .. $#buy ]),
   'products without an eligible offer come last');

# Paging.
($res, my $page1) = api_get('/search?limit=5');
($res, my $page2) = api_get('/search?limit=5&offset=5');
($res, my $both) = api_get('/search?limit=10');
is_deeply([ map { $_->{sku} } @{ $page1->{results} }, @{ $page2->{results} } ],
          [ map { $_->{sku} } @{ $both->{results} } ], 'limit/offset pages are consistent');
is(scalar @{ $page1->{results} }, 5, 'limit=5 returns 5');
($res, $t) = api_get('/search');
is(scalar @{ $t->{results} }, 20, 'the default page is 20');

# The paging window: offset + limit at most 1000, so that no request ranks a
# whole catalogue to reach its page (the slowest search, sort=return_rate with
# weights and deliver_by, cost 30 ms at 100,000 products near the end).
my $deep = 'sort=return_rate&weights=price:0.1,delivery:0.6,quality:0.2,reliability:0.1'
  . '&verified_only=false';
($res, $t) = api_get("/search?$deep&limit=100&offset=900");
is($res->code, 200, 'the deepest page of the window (offset 900, limit 100) is served');
is($t->{offset}, 900, '... at the offset asked for') if $res->code == 200;
for my $q ("$deep&limit=100&offset=901", 'offset=1000', 'offset=990&limit=11', 'offset=100000') {
    ($res, $t) = api_get("/search?$q");
    is_json_error($res, $t, 400, 'VALIDATION_ERROR', "?" . substr($q, -22) . ' past the window is 400')
      && is($t->{field}, 'offset', '... naming offset')
      && ($q !~ /^offset=100+$/ ? like($t->{message}, qr/offset \+ limit must be at most 1000/,
                                               '... and the window') : 1);
}
($res, $t) = api_get('/search?offset=990&limit=10');
is($res->code, 200, 'offset 990 with limit 10 ends at the window and is served');

# Weights in both encodings, echoed normalised.
($res, my $wa) = api_get('/search?weights=price:0.5,delivery:0.5');
($res, my $wb) = api_get('/search?weights=' . uri_escape_utf8('{"price":0.5,"delivery":0.5}'));
is_deeply($wa->{weights}, { price => 0.5, delivery => 0.5, quality => 0, reliability => 0 },
          'weights are normalised and missing keys are 0');
is_deeply($wa, $wb, 'both weights encodings give the same response');
($res, $wa) = api_get('/search?weights=price:2,delivery:2');
is_json_error($res, $wa, 400, 'VALIDATION_ERROR', 'a weight above 1 is refused');
# One rule for a weight's number in both encodings (issue 59): 1e-320, a
# number from 0 to 1 (a subnormal double), is price alone in either.
($res, $wa) = api_get('/search?weights=price:1e-320&limit=3');
is($res->code, 200, 'weights=price:1e-320 is a weight like any other') or diag $res->content;
($res, $wb) = api_get('/search?weights=' . uri_escape_utf8('{"price":1e-320}') . '&limit=3');
is_deeply($wa, $wb, '... as in the JSON encoding');
is_deeply($wa->{weights}, { price => 1, delivery => 0, quality => 0, reliability => 0 },
          '... normalised: price alone');

# Postcode echoed; device resolution.
($res, $t) = api_get('/search?postcode=3511+AB&limit=1');
is($t->{postcode}, '3511 AB', 'postcode is echoed');
my $devices = demo_data('devices');
my $dev = $devices->[0];
($res, $t) = api_get("/search?device=$dev->{slug}&verified_only=false&limit=100");
is($t->{device}, $dev->{slug}, 'device slug resolves');
my @fit = grep { my $p = $_; grep { $_->{device} eq $dev->{slug} && $_->{fit_status} eq 'fits' } @{ $p->{compatibility} // [] } } @$products;
is($t->{count}, scalar @fit, '... results are the parts that fit it');
ok(!grep({ ($_->{fit_status} // '') ne 'fits' } @{ $t->{results} }), '... each with fit_status fits');
my @nofit = grep { my $p = $_; grep { $_->{device} eq $dev->{slug} && $_->{fit_status} eq 'does_not_fit' } @{ $p->{compatibility} // [] } } @$products;
my %ex = map { $_->{sku} => $_->{reason} } @{ $t->{excluded} };
is(scalar(grep { ($ex{ $_->{sku} } // '') =~ /does not fit/i } @nofit), scalar @nofit,
   '... parts that do not fit are excluded with the reason');
($res, $t) = api_get('/search?device=' . uri_escape_utf8($dev->{name}));
is($t->{device}, $dev->{slug}, 'its full name resolves to the same device') or diag $res->content;

my %words;
for my $d (@$devices) { $words{ lc $_ }{ $d->{slug} } = 1 for split /\W+/, $d->{brand} }
my ($shared) = grep { keys %{ $words{$_} } >= 2 } sort keys %words;
($res, $t) = api_get("/search?device=$shared");
is_json_error($res, $t, 400, 'VALIDATION_ERROR', "an ambiguous device ('$shared') is refused");
is($t->{field}, 'device', '... naming the field');
my @cand = keys %{ $words{$shared} };
ok(!grep({ index($t->{message}, $_) < 0 } @cand), '... and naming every candidate');
($res, $t) = api_get('/search?device=qqqzzz-not-a-device');
is_json_error($res, $t, 400, 'VALIDATION_ERROR', 'a device nothing matches is refused');

# Validation: every parameter outside its limits.
my @bad = (
    [ 'q=' . ('a' x 201), 'q' ], [ 'q=%21%21', 'q' ], [ 'device=' . ('d' x 101), 'device' ],
    [ 'category=shoes', 'category' ], [ 'part_type=engine', 'part_type' ],
    [ 'max_price=abc', 'max_price' ], [ 'max_price=-3', 'max_price' ], [ 'max_price=1.234', 'max_price' ],
    [ 'deliver_by=2026-13-01', 'deliver_by' ], [ 'deliver_by=tomorrow', 'deliver_by' ],
    [ 'deliver_by=2020-01-01', 'deliver_by' ], [ 'verified_only=maybe', 'verified_only' ],
    [ 'merchant=' . ('m' x 51), 'merchant' ], [ 'merchant=nobody-sells-here', 'merchant' ],
    [ 'postcode=' . ('1' x 13), 'postcode' ], [ 'postcode=%3Cscript%3E', 'postcode' ],
    [ 'sort=popularity', 'sort' ], [ 'weights=price:0,delivery:0', 'weights' ],
    [ 'weights=speed:1', 'weights' ], [ 'weights=price:-0.5', 'weights' ],
    [ 'weights=%7B%22price%22%3A', 'weights' ], [ 'limit=0', 'limit' ], [ 'limit=101', 'limit' ],
    [ 'offset=-1', 'offset' ], [ 'limit=ten', 'limit' ], [ 'colour=red', 'colour' ],
    [ 'q=a&q=b', 'q' ], [ 'q=%FF', 'q' ], [ 'q=%00', 'q' ],
);
for my $b (@bad) {
    ($res, $t) = api_get("/search?$b->[0]");
    is_json_error($res, $t, 400, 'VALIDATION_ERROR', "?" . substr($b->[0], 0, 40) . " is 400")
      && is($t->{field}, $b->[1], "... field $b->[1]");
}
($res, $t) = api_get('/search?q=' . ('a' x 200) . '&limit=1');
is($res->code, 200, 'q of exactly 200 characters is fine');
($res, $t) = api_get('/search?q=' . uri_escape_utf8("\x{e9}" x 200) . '&limit=1');
is($res->code, 200, '... counted in characters, not bytes');

done_testing();
