# MCP's agent tools (docs/mcp.md): the same keys and headers as REST, quoting
# and ordering with idempotency keys (replayed over MCP and REST alike),
# cancelling, and an order above the confirm-above threshold telling the agent
# what a human must do. The protocol itself: mcp.t.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use AgentShop::Test;
use AgentShop::MCP;

my $reason = 'Bought through MCP for the replay test, best-ranked offer.';

# ---- agent tools: same keys and headers as REST ----
my ($user, $key) = new_agent();
new_mandate($user, per_order => 1000, monthly => 10000, confirm_above => 1000);
my @auth = (Authorization => "Bearer $key", 'Service-Agent' => 'mcp-test/1.0');
{
    my (undef, $r) = tool('get_mandate', {});
    tool_error($r, 403, 'AGENT_UNIDENTIFIED', 'get_mandate without a key: the REST 403 AGENT_UNIDENTIFIED object');
}
{
    my (undef, $r) = tool('get_mandate', {}, Authorization => "Bearer $key");
    tool_error($r, 403, 'AGENT_UNIDENTIFIED', '... and without Service-Agent');
}
{
    my (undef, $r) = tool('get_mandate', {}, @auth);
    my (undef, $rest) = api_get('/mandates/current', agent_headers($key));
    is_deeply($r->{structuredContent}, $rest, 'get_mandate with the key: GET /mandates/current');
}
{
    my (undef, $r) = tool('get_order', { order_id => 'ord_nosuchorder' }, @auth);
    tool_error($r, 404, 'NOT_FOUND', 'get_order of an unknown order: 404 NOT_FOUND');
}
{
    my (undef, $r) = tool('get_order', { order_id => 'a/b' }, @auth);
    tool_error($r, 400, 'VALIDATION_ERROR', 'a path argument with a slash: 400 VALIDATION_ERROR');
}

my ($pv, $off) = buyable_offer(min_stock => 10, max_cents => 3000);
ok($pv, 'an offer with stock to buy') or die "no offer to buy\n";
sub quote {
    my (@h) = @_;
    my (undef, $qr) = tool('create_quote', { sku => $pv->{sku}, offer_id => $off->{offer_id} }, @h);
    return $qr->{structuredContent} // {};
}
my $q = quote(@auth);
is($q->{sku}, $pv->{sku}, 'create_quote: a quote');
my %order = (quote_id => $q->{id}, reason => $reason, idempotency_key => "mcp-$$-1");
my $o;
{
    my (undef, $r) = tool('create_order', \%order, @auth);
    $o = $r->{structuredContent} // {};
    is($r->{_meta}{'agentshop/status'}, 201, 'create_order: 201');
    is($o->{status}, 'placed', '... placed');
}
{
    my (undef, $r) = tool('create_order', \%order, @auth);
    is($r->{structuredContent}{id}, $o->{id}, 'the same call again: the same order (idempotent replay)');
    ok($r->{_meta}{'agentshop/replayed'}, '... marked as replayed');
    is($r->{_meta}{'agentshop/status'}, 201, '... with the first status');
}
{
    my (undef, $rest) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => "mcp-$$-1"),
                                  { quote_id => $q->{id}, reason => $reason });
    is($rest->{id}, $o->{id}, '... and REST with the same Idempotency-Key replays it too');
}
{
    my (undef, $r) = tool('create_order', { %order, reason => "$reason Changed." }, @auth);
    tool_error($r, 422, 'IDEMPOTENCY_KEY_REUSED', 'the key with other arguments: 422 IDEMPOTENCY_KEY_REUSED');
}
{
    my (undef, $r) = tool('create_order', { quote_id => quote(@auth)->{id}, reason => $reason }, @auth);
    tool_error($r, 400, 'IDEMPOTENCY_KEY_REQUIRED', 'create_order without idempotency_key: 400 IDEMPOTENCY_KEY_REQUIRED');
    is($r->{structuredContent}{field}, 'idempotency_key', '... naming the argument');
}
{
    my (undef, $r) = tool('create_order', { quote_id => quote(@auth)->{id}, reason => $reason }, @auth,
                          'Idempotency-Key' => "mcp-$$-header");
    is($r->{_meta}{'agentshop/status'}, 201, '... or taking the Idempotency-Key header instead');
}
{
    my (undef, $r) = tool('create_order', { %order, idempotency_key => "bad key" }, @auth);
    tool_error($r, 400, 'VALIDATION_ERROR', 'an idempotency_key with a space: 400 VALIDATION_ERROR');
}
{
    my (undef, $r) = tool('cancel_order', { order_id => $o->{id} }, @auth);
    is($r->{structuredContent}{status}, 'cancelled', 'cancel_order: cancelled');
}
{
    my (undef, $r) = tool('cancel_order', { order_id => $o->{id} }, @auth);
    is($r->{structuredContent}{status}, 'cancelled', '... and again: the same');
}

# Above the confirm-above threshold: not an error, the agent is told what to do.
{
    my ($u2, $k2) = new_agent();
    new_mandate($u2, per_order => 1000, monthly => 10000, confirm_above => 0.01);
    my @auth2 = (Authorization => "Bearer $k2", 'Service-Agent' => 'mcp-test/1.0');
    my (undef, $r) = tool('create_order', { quote_id => quote(@auth2)->{id}, reason => $reason,
                                            idempotency_key => "mcp-$$-confirm" }, @auth2);
    ok($r && !$r->{isError}, 'create_order above the threshold: not an error');
    is($r->{_meta}{'agentshop/status'}, 202, '... REST status 202');
    is($r->{structuredContent}{error}, 'CONFIRMATION_REQUIRED', '... the 202 body');
    my $url = $r->{structuredContent}{confirmation}{url} // 'none';
    like($r->{content}[1]{text} // '', qr/human must approve.*\Q$url\E/s, '... and a text telling a human to open confirmation.url');
}

done_testing();
