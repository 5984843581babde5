# Access control (OWASP API2): a revoked agent key stops working on the very
# next request, on a kept-alive connection and in every httpd child, without
# replaying what it did before; the user's other keys go on working.
# docs/buying.md.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use AgentShop::Test;
use AgentShop::Access;

meet();

# A second key of Alice's, used before its revocation.
my $k2rec = ctl('key', 'create', '--user', $alice);
my ($k2, $k2_id) = @$k2rec{qw(key id)};
my $K2 = agent_headers($k2);
my $rq = quote_for($K2, 1);
my $rq2 = quote_for($K2, 1);
my $rorder;
{
    my ($res, $v) = post_json('/orders', agent_headers($k2, 'Idempotency-Key' => "rev-$$"), { quote_id => $rq->{id}, reason => $REASON });
    is($res->code, 201, 'a second key of Alice orders');
    $rorder = $v->{id} // 'none';
}
{
    my @warm = concurrently(map { sub { api_get('/mandates/current', $K2) } } 1 .. 8);
    is(scalar(grep { $_->{code} == 200 } @warm), 8, '... and reads her mandate from many connections at once');
    my ($res) = api_get('/mandates/current', $K2);
    is($res->code, 200, '... and on this keep-alive connection');
}

ctl('key', 'revoke', $k2_id);
my $before = facts($rorder);
{
    my ($res, $v) = api_get('/mandates/current', $K2);
    is_json_error($res, $v, 403, 'AGENT_UNIDENTIFIED', 'revoked: the very next request on the same connection is 403');
}
{
    my ($res, $v) = api_get("/orders/$rorder", $K2);
    is_json_error($res, $v, 403, 'AGENT_UNIDENTIFIED', '... reading its own order: 403');
}
{
    my ($res, $v) = post_json('/quotes', $K2, { sku => $p->{sku} });
    is_json_error($res, $v, 403, 'AGENT_UNIDENTIFIED', '... quoting: 403');
}
{
    my ($res, $v) = post_json('/orders', agent_headers($k2, 'Idempotency-Key' => "rev2-$$"), { quote_id => $rq2->{id}, reason => $REASON });
    is_json_error($res, $v, 403, 'AGENT_UNIDENTIFIED', '... ordering: 403');
}
{
    my ($res, $v) = post_json('/orders', agent_headers($k2, 'Idempotency-Key' => "rev-$$"), { quote_id => $rq->{id}, reason => $REASON });
    is_json_error($res, $v, 403, 'AGENT_UNIDENTIFIED', '... a retry of an earlier order does not replay it');
    unlike($res->content, qr/\Q$rorder\E/, '... nor show it');
}
{
    my ($res, $v) = post_json("/orders/$rorder/cancel", $K2, '');
    is_json_error($res, $v, 403, 'AGENT_UNIDENTIFIED', '... cancelling: 403');
}
{
    my @after = concurrently(map { my $i = $_; sub { $i % 2 ? api_get('/mandates/current', $K2) : post_json('/quotes', $K2, { sku => $p->{sku} }) } } 1 .. 12);
    is(scalar(grep { $_->{code} == 403 && $_->{body}{error} eq 'AGENT_UNIDENTIFIED' } @after), 12,
       '... and 403 in every child process at once');
}
is(scalar sql("SELECT id FROM orders WHERE quote_id = '$rq2->{id}'"), 0, '... no order was made');
is_deeply(facts($rorder), $before, '... nothing changed');
{
    my ($res) = api_get('/mandates/current', $A);
    is($res->code, 200, "Alice's other key still works (revocation is per key)");
}

done_testing();
