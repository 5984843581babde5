# The official TypeScript SDK (@modelcontextprotocol/sdk) against POST /v1/mcp:
# t/js/mcp-client.mjs connects, lists the tools and calls each of them
# (searches, reads, quotes, orders, cancels, errors), validating every
# structuredContent against the tool's outputSchema. docs/mcp.md; the protocol
# by hand: mcp.t.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use JSON::PP;
use Apache::Test ();
use Apache::TestRequest ();
use AgentShop::Test;

my $JSON = JSON::PP->new->utf8->canonical;
my $top = Apache::Test::vars('serverroot') . '/..';

my ($u3, $k3) = new_agent();
new_mandate($u3, per_order => 1000, monthly => 10000, confirm_above => 1000);
my $hp = Apache::TestRequest::hostport();
my $out = `timeout 120 node '$top/t/js/mcp-client.mjs' 'http://$hp/v1/mcp' '$k3' 2>&1`;
my $sdk = eval { $JSON->decode((grep { /^\{/ } split /\n/, $out)[-1] // '') };
ok($sdk && !$sdk->{failure}, 'SDK: the client ran to the end') or diag($sdk ? $sdk->{failure} : $out);
$sdk //= {};
is($sdk->{protocol_version}, '2025-11-25', 'SDK: connected, negotiating 2025-11-25');
is($sdk->{session_id}, undef, 'SDK: no session id');
is($sdk->{server}{name}, 'agentshop', 'SDK: serverInfo');
ok($sdk->{instructions}, 'SDK: instructions');
is(scalar @{ $sdk->{tools} // [] }, 12, 'SDK: lists the 12 tools');
ok($sdk->{object_schemas} && $sdk->{annotated}, 'SDK: each with an object input schema and annotations');
my %step = map { $_->{name} => $_ } @{ $sdk->{steps} // [] };
is($step{search_products}{status}, 200, 'SDK: search_products');
is($step{create_quote}{status}, 201, 'SDK: create_quote');
is($sdk->{quote}{sku}, $sdk->{sku}, '... for the product found');
is($step{create_order}{status}, 201, 'SDK: create_order');
is($sdk->{order}{status}, 'placed', '... placed');
is($sdk->{order}{quote_id}, $sdk->{quote}{id}, '... from the quote');
ok($step{create_order_again}{replayed} && $sdk->{replay_same_order}, 'SDK: the same create_order again replays the order');
is($sdk->{got_status}, 'placed', 'SDK: get_order');
is($sdk->{cancelled_status}, 'cancelled', 'SDK: cancel_order');
is_deeply($sdk->{schema_compile_errors}, [], 'SDK: every output schema compiles (Ajv, JSON Schema 2020-12)');
is_deeply([ sort grep { $_ ne 'no_such_tool' && $step{$_}{protocol_error} } keys %step ], [],
          'SDK: no tool call failed in the SDK (which checks structuredContent against the outputSchema)');
is_deeply({ map { $_ => $step{$_}{schema_errors} } grep { $_ ne 'no_such_tool' && @{ $step{$_}{schema_errors} // ['none'] } } keys %step },
          {}, 'SDK: every structuredContent, results and errors, validates against its tool\'s outputSchema');
is(scalar(grep { /^(search_products|get_product|find_devices|compatible_parts|check_compatibility|ask_question|get_mandate|create_quote|create_order|get_order|cancel_order|start_return)$/ } keys %step), 12,
   'SDK: each of the 12 tools was called');
ok(!grep({ !$_->{protocol_error} && $_->{text_is_json} } values %step), 'SDK: no text is the JSON again (a 2025-11-25 client reads structuredContent)');
is($sdk->{search_detail}, 'compact', 'SDK: search_products is compact by default');
my ($compact, $full) = map { $step{$_}{data_bytes} // 0 } qw(search_products search_products_full);
ok(($step{search_products}{text_bytes} // 0) < $compact, '... with a summary shorter than its data as text');
ok($sdk->{full_has_components} && $full > 3 * $compact,
   "... and detail full is GET /search's body, offers' components and all")
  or diag("components: " . ($sdk->{full_has_components} ? 'yes' : 'no') . "; bytes full $full, compact $compact");
like($step{start_return}{text} // '', qr/^Error \d{3} [A-Z_]+/, 'SDK: an error\'s text is one line naming its code');
ok($step{get_order_missing}{isError} && ($sdk->{missing_error} // '') eq 'NOT_FOUND', 'SDK: a REST error is a tool error with the REST object');
is($sdk->{unknown_tool_code}, -32602, 'SDK: an unknown tool is a protocol error -32602');
ok($sdk->{ping}, 'SDK: ping');
{
    my (undef, $rest) = api_get("/orders/" . ($sdk->{order}{id} // 'none'), agent_headers($k3));
    is($rest->{status}, 'cancelled', 'the order the SDK cancelled is cancelled over REST too');
}

done_testing();
