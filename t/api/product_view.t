# A product view is read from the database in one statement (the product, its
# specs, offers, questions, the device's compatibility row and the version that
# validates the kept view). What that read must still give: every part in its
# order (offers by id, questions as asked), the parts that may be empty, the
# device's row or none, the order of the checks of an unknown product; and,
# on every child, a new question or a stock change in the very next view.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use AgentShop::Test;
use JSON::PP;

my $products = demo_data('products');
my ($multi) = grep { @{ $_->{offers} } >= 3 } @$products;
ok($multi, 'a demo product with three offers or more') or BAIL_OUT('no such product');
my $sku = $multi->{sku};
my ($pid) = map { $_->[0] } sql("SELECT id FROM products WHERE sku = '$sku'");

# ---- offers in the order of their ids ----
# An offer whose id sorts first, added last: SQLite's index gives it last.
my $first_id = "$sku-0-view-test";
my ($merchant) = map { $_->[0] } sql("SELECT merchant_id FROM offers WHERE product_id = $pid ORDER BY id LIMIT 1");
sql_write("INSERT INTO offers (id, product_id, merchant_id, price_cents, retail_price_cents, "
  . "price_label, delivery_days, stock) VALUES ('$first_id', $pid, '$merchant', 1900, 2000, "
  . "'Agent-only price (demo)', 3, 5)");
sql_write("UPDATE offers SET stock = 4 WHERE id = '$first_id'");    # raises the product's version
my @want = map { $_->[0] } sql("SELECT id FROM offers WHERE product_id = $pid ORDER BY id");
is($want[0], $first_id, 'the new offer sorts first in the database');
# deliver_by today: every offer delivers later, so all are ineligible, in the order given
my $today = today_plus(0);
my @views = bodies_everywhere("/products/$sku?deliver_by=$today");
my @bad = grep {
    my $v = eval { JSON::PP->new->decode($_) };
    !$v || join(' ', map { $_->{offer_id} } @{ $v->{offers}{ineligible} }) ne "@want"
} @views;
is(scalar @bad, 0, 'every view lists the ineligible offers in the order of their ids')
  or diag "want @want; got: $bad[0]";
my (undef, $v) = api_get("/products/$sku");
is($v->{offers}{best}{offer_id}, $v->{offers}{ranked}[0]{offer_id}, 'the best offer is the first ranked');
ok((grep { $_->{offer_id} eq $first_id } @{ $v->{offers}{ranked} }), 'the new offer is ranked');
sql_write("DELETE FROM offers WHERE id = '$first_id'");
sql_write("UPDATE offers SET stock = stock WHERE product_id = $pid");    # and the version again
(undef, $v) = api_get("/products/$sku");
ok(!(grep { $_->{offer_id} eq $first_id } @{ $v->{offers}{ranked} }, @{ $v->{offers}{ineligible} }),
   'gone again once deleted');

# ---- questions in the order they were asked, at once on every child ----
my ($user, $key) = new_agent();
my $H = agent_headers($key);
my @asked;
for my $i (1 .. 3) {
    my ($res, $a) = post_json('/questions', $H, { sku => $sku, question => "How much is in it, view read $$ $i?" });
    is($res->code, 200, "question $i asked") or diag $res->content;
    push @asked, $a->{id};
    my @after = bodies_everywhere("/products/$sku");
    my @missing = grep { index($_, "view read $$ $i?") < 0 } @after;
    is(scalar @missing, 0, "... and every view lists it at once");
}
@want = map { $_->[0] } sql("SELECT id FROM questions WHERE product_id = $pid ORDER BY asked_at, id");
(undef, $v) = api_get("/products/$sku");
is_deeply([ map { $_->{id} } @{ $v->{questions} } ], \@want, 'the questions are listed as asked (time, then id)');
ok(ref $v->{questions}[-1]{answer} eq 'HASH', '... each with its answer');

# ---- a stock change, at once on every child ----
my ($stock_offer) = grep { $_->{stock} > 0 } @{ $v->{offers}{ranked} };
sql_write("UPDATE offers SET stock = 0 WHERE id = '$stock_offer->{offer_id}'");
@views = bodies_everywhere("/products/$sku");
@bad = grep { my $x = eval { JSON::PP->new->decode($_) };
              !$x || (grep { $_->{offer_id} eq $stock_offer->{offer_id} } @{ $x->{offers}{ranked} })
                  || !(grep { $_->{offer_id} eq $stock_offer->{offer_id} && $_->{reason} eq 'Out of stock' }
                       @{ $x->{offers}{ineligible} }) } @views;
is(scalar @bad, 0, 'an offer out of stock is ineligible in every view at once');
sql_write("UPDATE offers SET stock = $stock_offer->{stock} WHERE id = '$stock_offer->{offer_id}'");
@views = bodies_everywhere("/products/$sku");
@bad = grep { my $x = eval { JSON::PP->new->decode($_) };
              !$x || !(grep { $_->{offer_id} eq $stock_offer->{offer_id} && $_->{stock} == $stock_offer->{stock} }
                       @{ $x->{offers}{ranked} }) } @views;
is(scalar @bad, 0, '... and ranked again with its stock once back');

# ---- a product with nothing but itself: no specs, offers or questions ----
my $soap = (grep { $_->{category} eq 'hand-soap' } @$products)[0];
sql_write("INSERT INTO products (id, sku, name, brand, category, part_type, description, image_urls, "
  . "source_url, source_notes, source_checked_at, source_product_id, availability, is_demo, "
  . "verif_status, return_rate, wrong_item_rate, agent_orders_90d, orders_per_week) VALUES "
  . "(990001, 'ZZ-LONE-1', 'Lone soap', 'Nobody', 'hand-soap', '$soap->{part_type}', "
  . "'Sold by nobody.', '[\"https://img.example/z.jpg\"]', 'https://merchant.example/p/z', '[]', "
  . "'2026-11-18T09:00:00Z', 'z-1', 'in_stock', 1, 'pending', 0.01, 0, 0, "
  . "'[0,0,0,0,0,0,0,0,0,0,0,0,0]')");
my $res;
($res, $v) = api_get('/products/ZZ-LONE-1');
is($res->code, 200, 'a product without specs, offers or questions');
is_deeply([ map { scalar @{ $_ } } $v->{verification}{rows}, $v->{offers}{ranked},
            $v->{offers}{ineligible}, $v->{questions} ], [0, 0, 0, 0], '... has none of them');
ok(!defined $v->{offers}{best}, '... no best offer');
like($v->{offers}{explanation}, qr/nobody sells/, '... and says why');
sql_write('DELETE FROM products WHERE id = 990001');
($res, $v) = api_get('/products/ZZ-LONE-1');
is_json_error($res, $v, 404, 'NOT_FOUND', 'and 404 once deleted');

# ---- a device: its row, or none ----
my ($part) = grep { @{ $_->{compatibility} // [] } } @$products;
my %known = map { $_->{device} => 1 } @{ $part->{compatibility} };
my ($other) = grep { !$known{$_} } map { $_->{slug} } @{ demo_data('devices') };
($res, $v) = api_get("/products/$part->{sku}?device=$other");
is($res->code, 200, 'a view for a device without compatibility data');
is($v->{fit_status}, 'unknown', '... fit_status unknown');
is_deeply($v->{compatibility}, [], '... no compatibility row');
ok(!$v->{right_item_guarantee}, '... and no guarantee');
my $c = $part->{compatibility}[0];
($res, $v) = api_get("/products/$part->{sku}?device=$c->{device}");
is($v->{fit_status}, $c->{fit_status}, 'the device with data: its fit status');

# ---- an unknown product: the device is checked first, as for a known one ----
($res, $v) = api_get("/products/NO-SUCH-SKU?device=$c->{device}");
is_json_error($res, $v, 404, 'NOT_FOUND', 'unknown sku with a known device is 404');
($res, $v) = api_get('/products/NO-SUCH-SKU?device=no-such-device-anywhere');
is_json_error($res, $v, 400, 'VALIDATION_ERROR', 'unknown sku with an unknown device is 400');
is($v->{field}, 'device', '... naming the device');

done_testing();
