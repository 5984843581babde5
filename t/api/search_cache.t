# Pages of searches with q are kept encoded by each httpd child
# (AgentShopSearchCache), and a kept page is served only while what it was
# built from is unchanged: the text index's version and the stock of the
# page's offers. An order, a cancellation or any other write to that stock
# shows in the very next page, from every child; another query is another page.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use AgentShop::Test;
use JSON::PP;

# A product whose best offer can be bought twice within a default mandate, and
# a search with q that lists it on its first page.
my ($sku, $offer, $path);
for my $p (@{ demo_data('products') }) {
    my (undef, $v) = api_get("/products/$p->{sku}");
    my $best = $v && $v->{offers} && $v->{offers}{ranked}[0] or next;
    next if $best->{stock} < 5 || $best->{price_cents} > 5000;
    my ($word) = grep { /^[a-z]{4,}$/ } map { lc } split /\W+/, $v->{name} or next;
    my $try = "/search?q=$word&category=$v->{category}";
    my (undef, $s) = api_get($try);
    my ($hit) = grep { $_->{sku} eq $v->{sku} } @{ $s->{results} // [] } or next;
    next unless $hit->{best_offer} && $hit->{best_offer}{offer_id} eq $best->{offer_id};
    ($sku, $offer, $path) = ($v->{sku}, $best, $try);
    last;
}
ok($path, "a search that lists a buyable product: $path") or BAIL_OUT('no product to search for');

# Answers from several children (bodies_everywhere).
sub pages_everywhere { return bodies_everywhere($_[0] // $path) }
sub stock_in {
    my ($body) = @_;
    my $s = eval { JSON::PP->new->decode($body) } or return -1;
    my ($hit) = grep { $_->{sku} eq $sku } @{ $s->{results} };
    return $hit && $hit->{best_offer} ? $hit->{best_offer}{stock} : -1;
}
sub stocks_other_than {
    my ($want, @bodies) = @_;
    return [ map { stock_in($_) } grep { stock_in($_) != $want } @bodies ];
}

my @before = pages_everywhere();
is(scalar(@before), 24, '24 pages');
my %distinct = map { $_ => 1 } @before;
is(scalar(keys %distinct), 1, 'every child sends the same bytes for an unchanged page');
my $stock = stock_in($before[0]);
is($stock, $offer->{stock}, "the page shows the offer's stock, $offer->{stock}");

# ---- an order ----
my ($user, $key) = new_agent();
new_mandate($user);
my $H = agent_headers($key);
my ($res, $q) = post_json('/quotes', $H, { sku => $sku, offer_id => $offer->{offer_id}, quantity => 2 });
is($res->code, 201, 'POST /quotes') or diag $res->content;
my $o;
($res, $o) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => "sc-$$-1"),
                       { quote_id => $q->{id}, reason => 'Testing that cached search pages follow the stock.' });
is($res->code, 201, 'POST /orders') or diag $res->content;
is_deeply(stocks_other_than($stock - 2, pages_everywhere()), [], 'after the order every page shows 2 fewer in stock');

# ---- a cancellation ----
($res) = post_json("/orders/$o->{id}/cancel", $H, '');
is($res->code, 200, 'POST /orders/{id}/cancel') or diag $res->content;
is_deeply(stocks_other_than($stock, pages_everywhere()), [], 'after the cancellation every page shows the stock back');

# ---- any other writer (an operator, another node) ----
sql_write("UPDATE offers SET stock = stock + 7 WHERE id = '$offer->{offer_id}'");
is_deeply(stocks_other_than($stock + 7, pages_everywhere()), [], 'a write straight to the database shows in every page');
sql_write("UPDATE offers SET stock = stock - 7 WHERE id = '$offer->{offer_id}'");
is_deeply(stocks_other_than($stock, pages_everywhere()), [], '... and so does undoing it');

# ---- the query is part of what is kept ----
my ($r1, $all) = api_get($path);
my ($r2, $one) = api_get("$path&limit=1");
is($r2->code, 200, 'the same search with limit=1');
is(scalar(@{ $one->{results} }), 1, '... has one result, not the kept page of ' . scalar(@{ $all->{results} }));
is($one->{limit}, 1, '... and says limit 1');
my ($r3, $cheapest) = api_get("$path&sort=price");
is($cheapest->{sort}, 'price', 'sorted by price, the page says so');
# (a product no offer of which can be bought now has no best offer: last)
my @prices = map { $_->{best_offer} ? $_->{best_offer}{price_cents} : 9e18 } @{ $cheapest->{results} };
ok(scalar(grep { $_ < 9e18 } @prices), '... with prices');
is_deeply(\@prices, [ sort { $a <=> $b } @prices ], '... and its results are in price order');

# ---- a value cannot stand for other parameters in the cache's key ----
# q=soap%0Alimit%3D3 decodes to the text "soap\nlimit=3": kept under a key
# that joined decoded pairs with "\n", its page was then served for
# q=soap&limit=3 (issue 17).
my @poison = bodies_everywhere('/search?q=soap%0Alimit%3D3&category=hand-soap');
my @real = bodies_everywhere('/search?q=soap&limit=3&category=hand-soap');
my @counts = map { my $s = eval { JSON::PP->new->decode($_) }; $s ? scalar @{ $s->{results} } . "/$s->{limit}" : $_ } @real;
is_deeply([ grep { $_ ne '3/3' } @counts ], [],
          'q=soap&limit=3 gives its own page of 3 in every child after q=soap%0Alimit%3D3 was kept');
my @p = map { my $s = eval { JSON::PP->new->decode($_) }; $s ? $s->{limit} : $_ } @poison;
is_deeply([ grep { $_ ne '20' } @p ], [], '... and the text with a newline was its own search (limit 20)');

done_testing();
