# Search with the default weights and no offer filters is sorted and paged by
# the engine from each product's rank in the search order table (product_rank),
# and only the page's stock is read. Its pages must be exactly what the
# documented rules (docs/ranking.md, "Search order") give over every product's
# live view, which core ranks from the offers as they are now; and the table
# must follow stock: an offer that sells out or comes back moves its product at
# once, in the same transaction as the order or the cancellation.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use AgentShop::Test;

my $products = demo_data('products');

sub page {
    my ($query) = @_;
    my ($res, $v) = api_get("/search?$query");
    die "search $query: " . $res->code . ' ' . $res->content unless $res->code == 200;
    return $v;
}

# The oracle: every product's live view, ranked by core from its offers as they
# are now (not from the search order table), sorted by the documented rules.
my %by_sku = map { $_->{sku} => $_ } @$products;
my %live;
sub refresh {
    for my $p (@_) {
        my (undef, $v) = api_get("/products/$p->{sku}");
        my $best = $v->{offers}{ranked}[0];
        $live{ $p->{sku} } = { sku => $p->{sku}, category => $p->{category},
            part_type => $p->{part_type}, hidden => product_is_contradicted($p) ? 1 : 0,
            best => $best, return_rate => $v->{performance}{return_rate} };
    }
}
refresh(@$products);

my %KEY = (score => sub { $_[0]{best} ? -$_[0]{best}{score} : 0 },
           price => sub { $_[0]{best} ? $_[0]{best}{price_cents} : 0 },
           delivery => sub { $_[0]{best} ? $_[0]{best}{delivery_days} : 0 },
           return_rate => sub { $_[0]{return_rate} });
sub expected {
    my (%o) = @_;
    my $key = $KEY{ $o{sort} // 'score' };
    my @match = grep { (!$o{category} || $_->{category} eq $o{category})
                       && (!$o{part_type} || $_->{part_type} eq $o{part_type}) } values %live;
    my @shown = grep { !$_->{hidden} || ($o{verified_only} // '') eq 'false' } @match;
    my @sorted = sort {
        (!!$b->{best} <=> !!$a->{best}) || ($key->($a) <=> $key->($b))
            || (($b->{best} ? $b->{best}{score} : 0) <=> ($a->{best} ? $a->{best}{score} : 0))
            || ($a->{sku} cmp $b->{sku})
    } @shown;
    my ($off, $lim) = ($o{offset} // 0, $o{limit} // 20);
    my @page = grep { defined } @sorted[ $off .. $off + $lim - 1 ];
    return (scalar @shown, scalar(@match) - scalar(@shown), [ map { $_->{sku} } @page ],
            [ sort map { $_->{sku} } grep { $_->{hidden} } @match ]);
}

sub check {
    my ($query, $name) = @_;
    my %o = map { split /=/, $_, 2 } split /&/, $query;
    my ($count, $xcount, $skus, $hidden) = expected(%o);
    my $v = page($query);
    is($v->{count}, $count, "$name '$query': count");
    is($v->{excluded_count}, ($o{verified_only} // '') eq 'false' ? 0 : $xcount, '... excluded_count');
    is_deeply([ map { $_->{sku} } @{ $v->{results} } ], $skus, '... the page, in order');
    is_deeply([ sort map { $_->{sku} } @{ $v->{excluded} } ],
              ($o{verified_only} // '') eq 'false' ? [] : $hidden, '... the excluded products');
}

my @queries = (
    'limit=20', 'limit=100', 'limit=100&offset=100', 'offset=150&limit=50', 'limit=7&offset=13',
    'verified_only=false&limit=100', 'verified_only=false&limit=100&offset=100',
    (map { "sort=$_&limit=100" } qw(score price delivery return_rate)),
    (map { "sort=$_&limit=100&verified_only=false&offset=90" } qw(price delivery return_rate)),
    (map { "category=$_&limit=100" } qw(hand-soap air-filters vacuum-parts coffee-kitchen
                                         printer-ink chargers-cables batteries)),
    'category=vacuum-parts&sort=price&limit=5&offset=3', 'part_type=filter&limit=100',
    'part_type=filter&category=vacuum-parts&sort=delivery', 'category=printer-ink&sort=return_rate',
    'part_type=filter&sort=return_rate&verified_only=false',
);
check($_, 'paged search') for @queries;

# With text the engine matches words in name, brand, description, the category
# and part-type labels and the specifications, in any form (stems) and as word
# beginnings; results are in tiers (every word exact, then with prefixes), and
# within a tier buyable first, then by score (docs/search.md). Every product
# whose name, brand or description has a word beginning with q is found, and
# every result has such a word somewhere in its text (q's first five letters
# stand in for its other forms: "batter" for battery and batteries).
sub text_of {
    my ($p) = @_;
    my @spec = map { ($_->{label}, (defined $_->{measured} && !ref $_->{measured} ? $_->{measured} : ()),
                      (defined $_->{claimed} && !ref $_->{claimed} ? $_->{claimed} : ())) } @{ $p->{specs} || [] };
    return join ' ', $p->{name}, $p->{brand}, $p->{description}, $p->{category}, $p->{part_type}, @spec;
}
my %TIER = (exact => 0, prefix => 1, corrected => 2);
for my $q (qw(filter pack hepa battery)) {
    my $v = page("q=$q&limit=100&verified_only=false");
    my %got = map { $_->{sku} => 1 } @{ $v->{results} };
    my @must = sort grep { my $p = $by_sku{$_};
                           "$p->{name} $p->{brand} $p->{description}" =~ /\b\Q$q\E/i } keys %by_sku;
    is_deeply([ grep { !$got{$_} } @must ], [], "q=$q: every product with the word is found");
    my $stem = substr($q, 0, 5);
    my @stray = grep { text_of($by_sku{$_}) !~ /\Q$stem\E/i } sort keys %got;
    is_deeply(\@stray, [], '... and every result has it');
    is($v->{count}, scalar(keys %got), '... count is the number of results');
    my @keys = map { my $l = $live{ $_->{sku} };
                     [ $TIER{ $_->{match} } // 9, $l->{best} ? 0 : 1, -($l->{best} ? $l->{best}{score} : 0), $_->{sku} ] }
               @{ $v->{results} };
    my @bad = grep { my ($x, $y) = @keys[$_ - 1, $_];
                     ($x->[0] <=> $y->[0] || $x->[1] <=> $y->[1] || $x->[2] <=> $y->[2] || $x->[3] cmp $y->[3]) > 0 } 1 .. $#keys;
    is_deeply(\@bad, [], '... in tiers, buyable first, then by score, then sku');
    ok(!grep({ !$_->{matched_all_words} } @{ $v->{results} }), '... every result has every word');
}

# ---- the table follows stock ----
# A product with one offer in stock, few units, in a category the mandate allows.
my ($target, $view);
for my $p (@$products) {
    next if product_is_contradicted($p);
    my (undef, $v) = api_get("/products/$p->{sku}");
    next unless $v && @{ $v->{offers}{ranked} } == 1;
    my $o = $v->{offers}{ranked}[0];
    next unless $o->{stock} >= 1 && $o->{stock} <= 10 && $o->{price_cents} * $o->{stock} < 100000;
    ($target, $view) = ($p, $v);
    last;
}
ok($target, 'the demo has a product with one offer and at most 10 units') or done_testing(), exit;
my $offer = $view->{offers}{ranked}[0];
my $cat = $target->{category};

# Where the product stands in its category, paged, and its best offer there.
sub standing {
    my ($query) = @_;
    my $v = page("$query&limit=100");
    for my $i (0 .. $#{ $v->{results} }) {
        my $r = $v->{results}[$i];
        return ($i, $r, $v) if $r->{sku} eq $target->{sku};
    }
    return (undef, undef, $v);
}
my ($pos, $before) = standing("category=$cat");
ok(defined $pos && $before->{best_offer}, "$target->{sku} is listed and buyable before");
is($before->{best_offer}{score}, $offer->{score}, '... with its offer\'s score');

my ($user, $key) = new_agent();
new_mandate($user, per_order => 1000, monthly => 10000, confirm_above => 1000);
my $H = agent_headers($key);
my (undef, $quote) = post_json('/quotes', $H, { sku => $target->{sku}, quantity => $offer->{stock} });
my ($res, $order) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => "so-$$-" . time),
    { quote_id => $quote->{id}, reason => 'Buying every unit to see search follow stock.' });
is($res->code, 201, "ordering all $offer->{stock} units is placed") or diag $res->content;

my ($pos2, $after, $v2) = standing("category=$cat&sort=score");
if (!defined $pos2) { # further down: look through every page
    for (my $off = 100; $off < $v2->{count} && !defined $pos2; $off += 100) {
        ($pos2, $after) = standing("category=$cat&offset=$off");
    }
}
ok($after, "$target->{sku} is still listed when sold out");
ok($after && !$after->{best_offer}, '... without a best offer');
my $tail = page("category=$cat&limit=100&offset=" . ($v2->{count} > 100 ? $v2->{count} - 100 : 0));
ok((grep { $_->{sku} eq $target->{sku} } @{ $tail->{results} }), '... among the last results (unbuyable last)');
refresh($target);
ok(!$live{ $target->{sku} }{best}, 'its product view has no rankable offer either');
check($_, 'after the order') for "category=$cat&limit=100", "category=$cat&limit=100&sort=price",
    "category=$cat&limit=100&sort=delivery", 'limit=100&offset=100&verified_only=false';

# Cancelling gives the stock back: the product is buyable again, where it was.
my $oid = $order->{id};
($res) = api('POST', "/orders/$oid/cancel", $H);
is($res->code, 200, 'cancelling the order') or diag $res->content;
my ($pos3, $again) = standing("category=$cat");
is($pos3, $pos, "$target->{sku} is back at its place after the cancellation");
is($again && $again->{best_offer} && $again->{best_offer}{score}, $offer->{score}, '... with the same score');
refresh($target);
check("category=$cat&limit=100", 'after the cancellation');

# ---- too broad for ranking every match ----
# Not reachable on the demo (186 products): t/scale/same_results.pl checks the
# 400 on a generated catalogue of 200,000.

done_testing();
