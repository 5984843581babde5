# POST /v1/mcp: the Model Context Protocol over Streamable HTTP (docs/mcp.md),
# the protocol by hand: the lifecycle, the version header, Origin (DNS
# rebinding) and the transport's refusals. The tools: mcp_tools.t; buying
# through them: mcp_orders.t; the official TypeScript SDK: mcp_sdk.t.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use JSON::PP;
use Apache::TestRequest ();
use AgentShop::Test;
use AgentShop::MCP;

my $init = { protocolVersion => '2025-11-25', capabilities => {},
             clientInfo => { name => 'mcp.t', version => '1.0' } };

# ---- lifecycle: initialize and version negotiation ----
{
    my ($res, $d) = request('initialize', $init);
    is($res->code, 200, 'initialize: 200');
    like($res->header('Content-Type'), qr{^application/json}, '... as JSON');
    is($d->{id}, last_id(), '... answering its id');
    my $r = $d->{result};
    is($r->{protocolVersion}, '2025-11-25', '... the version asked for, 2025-11-25');
    is_deeply($r->{capabilities}, { tools => { listChanged => JSON::PP::false } }, '... tools, no list changes');
    is($r->{serverInfo}{name}, 'agentshop', '... serverInfo names the server');
    ok(length $r->{serverInfo}{version}, '... and its version');
    like($r->{instructions} // '', qr/create_order.*confirmation\.url/s, '... with instructions for agents');
    ok(!defined $res->header('MCP-Session-Id'), '... and no session id (stateless)');
}
for my $v ('2025-06-18', '2025-03-26') {
    my (undef, $d) = request('initialize', { %$init, protocolVersion => $v });
    is($d->{result}{protocolVersion}, $v, "a client asking for $v gets $v");
}
{
    my (undef, $d) = request('initialize', { %$init, protocolVersion => '2099-01-01' });
    is($d->{result}{protocolVersion}, '2025-11-25', 'an unknown version is answered with the newest');
}
{
    my (undef, $d) = request('initialize', { capabilities => {} });
    is($d->{error}{code}, -32602, 'initialize without protocolVersion: -32602');
}

# ---- MCP-Protocol-Version ----
{
    my (undef, $d) = request('ping', undef, 'MCP-Protocol-Version' => '2025-11-25');
    is_deeply($d, { jsonrpc => '2.0', id => last_id(), result => {} }, 'ping with MCP-Protocol-Version 2025-11-25: {}');
}
{
    my ($res) = request('ping', undef, 'MCP-Protocol-Version' => '2025-06-18');
    is($res->code, 200, '... 2025-06-18 too');
}
{
    my ($res) = request('ping');
    is($res->code, 200, '... and no header (taken as 2025-03-26)');
}
{
    my ($res, $d) = request('ping', undef, 'MCP-Protocol-Version' => '2024-11-05');
    rpc_error_without_id($res, $d, 400, -32000, 'an unsupported MCP-Protocol-Version: 400');
    like($d->{error}{message}, qr/2025-11-25/, '... naming the supported versions');
}
{
    my ($res, $d) = request('ping', undef, 'MCP-Protocol-Version' => 'banana');
    rpc_error_without_id($res, $d, 400, -32000, 'a malformed MCP-Protocol-Version: 400');
}

# ---- Origin (DNS rebinding) ----
my $own = 'http://' . Apache::TestRequest::hostport();
(my $port = $own) =~ s/.*://;
{
    my ($res, $d) = request('ping', undef, Origin => 'http://evil.example');
    rpc_error_without_id($res, $d, 403, -32000, 'a foreign Origin: 403 with a JSON-RPC error without id');
}
# Each: the headers of a ping, the status it gets, the check's name.
for my $case (
    [ [ Origin => 'null' ], 403, 'Origin: null: 403' ],
    [ [ Origin => "$own.evil.example" ], 403, 'an origin that only starts like ours: 403' ],
    [ [ Origin => $own ], 200, "the API's own origin ($own): allowed" ],
    [ [ Origin => uc($own) ], 200, '... compared without case' ],
    [ [ Origin => 'https://agent.example' ], 200, 'an origin of AgentShopMCPAllowOrigin: allowed' ],
    # DNS rebinding proper: the browser sends the attacker's name as Host too.
    # The own origin comes from the virtual host's names, never from Host.
    [ [ Host => "evil.example:$port", Origin => "http://evil.example:$port" ], 403,
      'Host and Origin both the attacker\'s name: 403 (the own origin is not taken from Host)' ],
    [ [ Origin => 'https://AGENT.example:443' ], 200, '... also written with its default port' ],
    [ [ Origin => 'http://agent.example' ], 403, '... but not under another scheme' ],
) {
    my ($headers, $status, $name) = @$case;
    my ($res) = request('ping', undef, @$headers);
    is($res->code, $status, $name);
}

# ---- notifications, responses, the transport's refusals ----
{
    my ($res) = rpc({ jsonrpc => '2.0', method => 'notifications/initialized' });
    is($res->code, 202, 'a notification: 202');
    is($res->content, '', '... with no body');
}
{
    my ($res) = rpc({ jsonrpc => '2.0', id => 7, result => {} });
    is($res->code, 202, 'a JSON-RPC response from the client: 202');
}
{
    my ($res) = api('GET', '/mcp', [ Accept => 'text/event-stream' ]);
    is($res->code, 405, 'GET /mcp: 405 (no server stream)');
    is($res->header('Allow'), 'POST', '... Allow: POST');
}
{
    my ($res) = api('DELETE', '/mcp');
    is($res->code, 405, 'DELETE /mcp: 405 (no sessions to end)');
}
# Each: a message refused before any method runs, its status and JSON-RPC code.
for my $case (
    [ sub { rpc([ { jsonrpc => '2.0', id => 1, method => 'ping' } ]) }, 400, -32600, 'a batch: 400 Invalid Request' ],
    [ sub { rpc('{"jsonrpc":"2.0","id":1,"method":') }, 400, -32700, 'broken JSON: 400 Parse error' ],
    [ sub { rpc('{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}') }, 400, -32700, 'duplicate keys: 400 Parse error' ],
    [ sub { rpc({ jsonrpc => '1.0', id => 1, method => 'ping' }) }, 400, -32600, 'jsonrpc other than 2.0: 400 Invalid Request' ],
    [ sub { rpc({ jsonrpc => '2.0', id => undef, method => 'ping' }) }, 400, -32600, 'a null id: 400 Invalid Request' ],
    [ sub { api('POST', '/mcp', [ 'Content-Type' => 'text/plain' ], '{"jsonrpc":"2.0","id":1,"method":"ping"}') },
      415, -32000, 'a body that is not application/json: 415' ],
    [ sub { api('POST', '/mcp', [ 'Content-Type' => 'application/json', Accept => 'text/html' ],
                '{"jsonrpc":"2.0","id":1,"method":"ping"}') },
      406, -32000, 'an Accept that allows neither JSON nor SSE: 406' ],
) {
    my ($send, $status, $code, $name) = @$case;
    my ($res, $d) = $send->();
    rpc_error_without_id($res, $d, $status, $code, $name);
}
{
    my ($res, $d) = request('resources/list');
    is($res->code, 200, 'an unknown method: 200 with a JSON-RPC error');
    is($d->{id}, last_id(), '... answering its id');
    is($d->{error}{code}, -32601, '... -32601 Method not found');
}
{
    my (undef, $d) = request('tools/call', { name => 'no_such_tool', arguments => {} });
    is($d->{error}{code}, -32602, 'an unknown tool: -32602');
}
{
    my (undef, $d) = request('tools/call', { name => 'get_product', arguments => [] });
    is($d->{error}{code}, -32602, 'arguments that are not an object: -32602');
}

# A client that accepts only an event stream gets the response as one event.
{
    my ($res) = api('POST', '/mcp', [ 'Content-Type' => 'application/json', Accept => 'text/event-stream' ],
                    '{"jsonrpc":"2.0","id":"s1","method":"ping"}');
    like($res->header('Content-Type'), qr{^text/event-stream}, 'Accept: text/event-stream: an SSE stream');
    like($res->content, qr/^event: message\ndata: \{"jsonrpc":"2.0","id":"s1","result":\{\}\}\n\n\z/,
         '... of one message event carrying the response');
}

done_testing();
