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

done_testing();
