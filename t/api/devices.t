# GET /v1/devices and GET /v1/devices/{slug}/compatible.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use AgentShop::Test;

my $devices  = demo_data('devices');
my $products = demo_data('products');
cmp_ok(scalar @$devices, '>=', 30, 'at least 30 demo devices');

my ($res, $v) = api_get('/devices?limit=100');
is($res->code, 200, 'GET /devices');
is(scalar @{ $v->{candidates} }, scalar @$devices, 'without q every device is a candidate');
for my $d (@$devices[0 .. 4]) {
    ($res, $v) = api_get('/devices?q=' . uri_escape_utf8($d->{name}));
    my $c = $v->{candidates};
    ok(@$c, "q=$d->{name} has candidates");
    is($c->[0]{slug}, $d->{slug}, '... the device itself first');
    ok(!grep({ !is_num($_->{confidence}) || $_->{confidence} < 0 || $_->{confidence} > 1 } @$c),
       '... confidences within 0..1');
    ok(!grep({ $c->[$_]{confidence} > $c->[ $_ - 1 ]{confidence} } 1 .. $#$c), '... best first');
    ok(!grep({ !defined $_->{name} || !defined $_->{brand} } @$c), '... with name and brand');
}
($res, $v) = api_get("/devices?q=$devices->[0]{slug}");
is($v->{candidates}[0]{confidence}, 1, 'an exact slug has confidence 1');
($res, $v) = api_get('/devices?q=qqqzzznothing');
is_deeply($v->{candidates}, [], 'nonsense has no candidates');
($res, $v) = api_get('/devices?q=' . ('x' x 201));
is_json_error($res, $v, 400, 'VALIDATION_ERROR', 'q over 200 characters is refused');
($res, $v) = api_get('/devices?brand=x');
is_json_error($res, $v, 400, 'VALIDATION_ERROR', 'unknown parameter is refused');

# Compatible parts, grouped by part type, against the compatibility data.
my $checked = 0;
for my $d (@$devices) {
    my @rows = map { my $p = $_; map { [ $p, $_ ] } grep { $_->{device} eq $d->{slug} } @{ $p->{compatibility} // [] } } @$products;
    my @fits = grep { $_->[1]{fit_status} eq 'fits' && !product_is_contradicted($_->[0]) } @rows;
    my @out  = grep { $_->[1]{fit_status} ne 'fits' || product_is_contradicted($_->[0]) } @rows;
    ($res, $v) = api_get("/devices/$d->{slug}/compatible");
    next unless is($res->code, 200, "compatible parts of $d->{slug}");
    is($v->{device}{slug}, $d->{slug}, '... device slug');
    my @parts = map { my $g = $_; map { [ $g->{part_type}, $_ ] } @{ $g->{parts} } } @{ $v->{groups} };
    is(scalar @parts, scalar @fits, '... every verified fitting part, no other');
    ok(!grep({ $_->[0] ne $_->[1]{part_type} || $_->[1]{fit_status} ne 'fits' } @parts),
       '... grouped by their part type, each fits');
    is(scalar @{ $v->{excluded} }, scalar @out, '... the rest excluded');
    ok(!grep({ !length $_->{reason} } @{ $v->{excluded} }), '... each with a reason');
    $checked++;
    last if $checked >= 8;
}
my ($d) = grep { my $s = $_->{slug}; grep { grep { $_->{device} eq $s && $_->{fit_status} eq 'does_not_fit' } @{ $_->{compatibility} // [] } } @$products } @$devices;
($res, $v) = api_get("/devices/$d->{slug}/compatible");
ok((grep { $_->{reason} =~ /does not fit/i } @{ $v->{excluded} }), "a part that does not fit $d->{slug} says why");

my ($g) = @{ $v->{groups} };
($res, $v) = api_get("/devices/$d->{slug}/compatible?part_type=$g->{part_type}");
ok(!grep({ $_->{part_type} ne $g->{part_type} } @{ $v->{groups} }), 'part_type filters the groups');
($res, $v) = api_get("/devices/$d->{slug}/compatible?part_type=rocket");
is_json_error($res, $v, 400, 'VALIDATION_ERROR', 'an unknown part_type is 400');
($res, $v) = api_get('/devices/no-such-device/compatible');
is_json_error($res, $v, 404, 'NOT_FOUND', 'an unknown device is 404');

# Paging: limit (1 to 100, default 20) and offset, as search pages; count and
# excluded_count are the totals; the pages, in turn, are the whole list.
my %listed;
for my $p (@$products) {
    next if product_is_contradicted($p);
    $listed{ $_->{device} }++ for grep { $_->{fit_status} eq 'fits' } @{ $p->{compatibility} // [] };
}
my ($big) = sort { $listed{$b} <=> $listed{$a} || $a cmp $b } keys %listed;
my $flat = sub { [ map { my $g = $_; map { "$g->{part_type} $_->{sku}" } @{ $g->{parts} } } @{ $_[0]{groups} } ] };
($res, my $whole) = api_get("/devices/$big/compatible?limit=100");
is($res->code, 200, "$big: the whole list in one page of 100");
is($whole->{count}, $listed{$big}, "... count is every verified part that fits ($listed{$big})");
is(scalar @{ $flat->($whole) }, $whole->{count}, '... and all of them are on the page');
is_deeply([ $whole->{limit}, $whole->{offset} ], [ 100, 0 ], '... limit and offset as applied');
my @keys = map { my $g = $_; map { [ $g->{part_type}, $_->{best_offer} ? 0 : 1,
    -($_->{best_offer} ? $_->{best_offer}{score} : 0), $_->{sku} ] } @{ $g->{parts} } } @{ $whole->{groups} };
my @sorted = sort { $a->[0] cmp $b->[0] || $a->[1] <=> $b->[1] || $a->[2] <=> $b->[2] || $a->[3] cmp $b->[3] } @keys;
is_deeply(\@keys, \@sorted, '... by part type, buyable first, best score, sku');
my (@paged, @sizes);
for (my $off = 0; $off < $whole->{count} + 2; $off += 2) {
    ($res, $v) = api_get("/devices/$big/compatible?limit=2&offset=$off");
    last unless is($res->code, 200, "... limit=2&offset=$off");
    is_deeply([ @$v{qw(count limit offset excluded_count)} ],
              [ $whole->{count}, 2, $off, $whole->{excluded_count} ], '... the same totals, its page') if $off == 0;
    push @sizes, scalar @{ $flat->($v) };
    push @paged, @{ $flat->($v) };
}
is_deeply(\@paged, $flat->($whole), '... pages of 2 together are the whole list, in its order');
ok(!grep({ $_ > 2 } @sizes), '... none longer than its limit');
is($sizes[-1], 0, '... and a page past the end is empty');
($res, $v) = api_get("/devices/$big/compatible");
is($v->{limit}, 20, 'without paging parameters the page is 20');
is_deeply($flat->($v), [ @{ $flat->($whole) }[ 0 .. ($whole->{count} > 20 ? 19 : $whole->{count} - 1) ] ],
          '... the first of the list');
for my $bad ([ 'limit=0', 'limit' ], [ 'limit=101', 'limit' ], [ 'offset=-1', 'offset' ],
             [ 'offset=901&limit=100', 'offset' ], [ 'offset=1000', 'offset' ]) {
    ($res, $v) = api_get("/devices/$big/compatible?$bad->[0]");
    is_json_error($res, $v, 400, 'VALIDATION_ERROR', "?$bad->[0] is 400")
      && is($v->{field}, $bad->[1], "... naming $bad->[1]");
}

done_testing();
