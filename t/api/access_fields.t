# Access control (OWASP API3 BOPLA, mass assignment): no body field lets a
# caller set what only the service decides (prices, status, owner, refund,
# fit): each one is 400 VALIDATION_ERROR naming it, and nothing changes; the
# same bodies without it are accepted. docs/api.md.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use JSON::PP ();
use AgentShop::Test;
use AgentShop::Access;

meet();

# Alice's orders the bodies below name: one placed, one shipped, one awaiting
# her confirmation through its signed link.
my $placed = order_for($akey, 1);
is($placed->{status}, 'placed', "Alice's placed order $placed->{id}");
my $waiting = order_for($akey, 2);
my ($apath, $atoken) = link_of($waiting);
ok($apath && $atoken, "Alice's order $waiting->{order_id} awaits her confirmation, a signed link")
  or die "no confirmation link\n";
my $shipped = order_for($akey, 1);
ctl('order', 'ship', $shipped->{id});
is(one("SELECT status FROM orders WHERE id = '$shipped->{id}'"), 'shipped', "Alice's shipped order $shipped->{id}");
my @alice_orders = ($placed->{id}, $waiting->{order_id}, $shipped->{id});

my $true = JSON::PP::true;
my ($part, $slug) = live_part();
ok($part, "a part that fits a device ($part->{sku}, $slug)");
my $oq = quote_for($A, 1);
# Each endpoint: its headers, a body it accepts, and the fields it must refuse.
my %endpoint = (
    '/quotes' => [ sub { $A }, { sku => $p->{sku}, offer_id => $off->{offer_id}, quantity => 1 },
                   [ price_cents => 1 ], [ unit_price_cents => 1 ], [ total_cents => 1 ], [ status => 'placed' ],
                   [ user => $mallory ], [ user_id => $mallory ], [ mandate_id => $mmd->{id} ], [ fit_status => 'fits' ],
                   [ right_item_guarantee => $true ], [ stock => 100 ], [ expires_at => '2099-01-01T00:00:00Z' ],
                   [ currency => 'EUR' ], [ merchant => 'x' ] ],
    '/orders' => [ sub { agent_headers($akey, 'Idempotency-Key' => ikey()) }, { quote_id => $oq->{id}, reason => $REASON },
                   [ price_cents => 1 ], [ unit_price_cents => 1 ], [ total_cents => 1 ], [ status => 'placed' ],
                   [ user => $mallory ], [ user_id => $mallory ], [ refund_cents => 100 ], [ refund_status => 'refunded' ],
                   [ fit_status => 'fits' ], [ right_item_guarantee => $true ], [ stock => 100 ], [ budget_cents => 0 ],
                   [ agent => 'human/1.0' ], [ confirmation_id => 'conf_x' ], [ quantity => 10 ] ],
    '/returns' => [ sub { agent_headers($akey, 'Idempotency-Key' => ikey()) }, { order_id => $shipped->{id}, reason_code => 'defective' },
                    [ refund_cents => 100000 ], [ refund_status => 'refunded' ], [ status => 'returned' ], [ user => $mallory ],
                    [ user_id => $mallory ], [ right_item_guarantee => $true ], [ fit_status => 'fits' ],
                    [ total_cents => 1 ], [ mandate_id => $mmd->{id} ], [ stock => 100 ] ],
    '/compatibility/check' => [ sub { $A }, { sku => $part->{sku}, device => $slug },
                    [ fit_status => 'does_not_fit' ], [ right_item_guarantee => $true ], [ user => $mallory ],
                    [ user_id => $mallory ], [ status => 'verified' ], [ verification_status => 'verified' ], [ price_cents => 1 ] ],
    '/questions' => [ sub { $A }, { sku => $p->{sku}, question => 'How much is in it?' },
                    [ answer => 'Everything you wished for.' ], [ user => $mallory ], [ user_id => $mallory ],
                    [ status => 'answered' ], [ asked_at => '2020-01-01T00:00:00Z' ], [ fit_status => 'fits' ], [ price_cents => 1 ] ],
    $apath => [ sub { [ 'Content-Type' => 'application/json' ] }, { decision => 'approve', token => $atoken },
                    [ status => 'approved' ], [ user => $mallory ], [ user_id => $mallory ], [ order_id => $placed->{id} ],
                    [ total_cents => 1 ], [ price_cents => 1 ], [ decided_at => '2020-01-01T00:00:00Z' ] ],
);
sub label { $_[0] eq $apath ? 'POST /confirmations/{id}' : "POST $_[0]" }

my $before = facts(@alice_orders);
my $quotes0 = one("SELECT COUNT(*) FROM quotes WHERE user_id = '$alice'");
for my $path (sort keys %endpoint) {
    my ($hdr, $base, @extra) = @{ $endpoint{$path} };
    for my $x (@extra) {
        my ($field, $value) = @$x;
        my ($res, $v) = post_json($path, $hdr->(), { %$base, $field => $value });
        is_json_error($res, $v, 400, 'VALIDATION_ERROR', label($path) . " with $field: 400 VALIDATION_ERROR")
          && is($v->{field}, $field, "... naming $field");
    }
}
# The form of the confirmation page is checked the same way.
{
    my ($res, $v) = api('POST', "$apath?token=$atoken", [ 'Content-Type' => 'application/x-www-form-urlencoded' ],
                        'decision=approve&status=approved');
    is_json_error($res, $v, 400, 'VALIDATION_ERROR', 'the confirmation form with status=approved: 400')
      && is($v->{field}, 'status', '... naming status');
}
is(one("SELECT COUNT(*) FROM quotes WHERE user_id = '$alice'"), $quotes0, 'no refused quote was stored');
is(scalar sql("SELECT id FROM orders WHERE quote_id = '$oq->{id}'"), 0, 'no refused order was made');
is_deeply(facts(@alice_orders), $before, 'nothing changed: no return, no question, the confirmation still waits, stock, budget');

# Controls: the same bodies without the extra field are accepted.
# (Not for /returns: a returned item is not restocked, and the later scripts
# audit stock against the data files; access.t's 404s are the returns' control.)
for my $path (grep { $_ ne '/returns' } sort keys %endpoint) {
    my ($hdr, $base) = @{ $endpoint{$path} };
    my ($res, $v) = post_json($path, $hdr->(), $base);
    ok($res->code >= 200 && $res->code < 300, label($path) . ' without the extra field is accepted (control)')
      or diag $res->content;
    if ($path eq '/orders') {
        is($v->{total_cents}, $oq->{total_cents}, '... at the quoted price');
        is($v->{status}, 'placed', '... placed by the service');
    } elsif ($path eq '/quotes') {
        is($v->{unit_price_cents}, $P, '... at the offer price');
    } elsif ($path eq $apath) {
        is($v->{status}, 'approved', '... approved by the link holder');
    }
}

done_testing();
