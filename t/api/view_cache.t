# Product views read whole from the database (AgentShopViewsFromIndex off, at
# /whole/v1 in t/conf/extra.conf.in) are kept encoded by each httpd child
# (AgentShopViewCache, off by default, on there), and a kept view is served
# only while nothing it was built from has changed: an order, a cancellation,
# a question or any other write to the product's offers shows in the very
# next view, from every child.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use AgentShop::Test;
use JSON::PP;

$AgentShop::Test::BASE = '/whole/v1';

my ($view, $offer) = buyable_offer(min_stock => 5, max_cents => 5000);
ok($offer, 'a product with an offer in stock') or BAIL_OUT('no offer to buy');
my $sku = $view->{sku};

# Answers from several children (bodies_everywhere).
sub views_everywhere { return bodies_everywhere("/products/$sku" . ($_[0] // '')) }
sub stock_in {
    my ($body) = @_;
    my $v = eval { JSON::PP->new->decode($body) } or return -1;
    my ($o) = grep { $_->{offer_id} eq $offer->{offer_id} } @{ $v->{offers}{ranked} }, @{ $v->{offers}{ineligible} // [] };
    return $o ? $o->{stock} : -1;
}

my @before = views_everywhere();
is(scalar(@before), 24, '24 views');
my %distinct = map { $_ => 1 } @before;
is(scalar(keys %distinct), 1, 'every child sends the same bytes for an unchanged product');
my $stock = stock_in($before[0]);
is($stock, $offer->{stock}, "the offer's stock is $offer->{stock}");

# ---- an order ----
my ($user, $key) = new_agent();
new_mandate($user);
my $H = agent_headers($key);
my ($res, $q) = post_json('/quotes', $H, { sku => $sku, offer_id => $offer->{offer_id}, quantity => 2 });
is($res->code, 201, 'POST /quotes') or diag $res->content;
my $o;
($res, $o) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => "vc-$$-1"),
                       { quote_id => $q->{id}, reason => 'Testing that cached views follow the stock.' });
is($res->code, 201, 'POST /orders') or diag $res->content;
my @after = views_everywhere();
is_deeply([ map { stock_in($_) } grep { stock_in($_) != $stock - 2 } @after ], [], 'after the order every view shows 2 fewer in stock');

# ---- a question ----
($res) = post_json('/questions', $H, { sku => $sku, question => "What does it weigh, view cache test $$?" });
is($res->code, 200, 'POST /questions') or diag $res->content;
my @asked = views_everywhere();
is(scalar(grep { index($_, "view cache test $$") < 0 } @asked), 0, 'after a question every view lists it');

# ---- a cancellation ----
($res) = post_json("/orders/$o->{id}/cancel", $H, '');
is($res->code, 200, 'POST /orders/{id}/cancel') or diag $res->content;
my @cancelled = views_everywhere();
is_deeply([ map { stock_in($_) } grep { stock_in($_) != $stock } @cancelled ], [], 'after the cancellation every view shows the stock back');

# ---- any other writer (an operator, another node) ----
sql_write("UPDATE offers SET stock = stock + 7 WHERE id = '$offer->{offer_id}'");
my @restocked = views_everywhere();
is_deeply([ map { stock_in($_) } grep { stock_in($_) != $stock + 7 } @restocked ], [], 'a write straight to the database shows in every view');
sql_write("UPDATE offers SET stock = stock - 7 WHERE id = '$offer->{offer_id}'");
is_deeply([ map { stock_in($_) } grep { stock_in($_) != $stock } views_everywhere() ], [], '... and so does undoing it');

# ---- the query is part of what is kept ----
my ($r1, $plain) = api_get("/products/$sku");
my ($r2, $cheap) = api_get("/products/$sku?weights=price:1");
is($r2->code, 200, 'GET with weights');
isnt($r1->content, $r2->content, 'a view with other weights is not the kept default view');
is($cheap->{offers}{ranked}[0]{weighted}{price}, $cheap->{offers}{ranked}[0]{components}{price},
   '... it is ranked by price alone');

done_testing();
