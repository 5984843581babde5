# POST /v1/mcp: the Model Context Protocol over Streamable HTTP (docs/mcp.md).
# First the protocol by hand over HTTP, then the official TypeScript SDK
# (t/js/mcp-client.mjs) connecting, listing the tools and buying.
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
my $TEXT = JSON::PP->new->canonical;    # for text already decoded into characters
my $MCP = ['Content-Type' => 'application/json', 'Accept' => 'application/json, text/event-stream'];

# One JSON-RPC message (a hash, or raw text) with extra headers: ($res, $data).
sub rpc {
    my ($msg, @h) = @_;
    return api('POST', '/mcp', [ @$MCP, @h ], ref $msg ? $JSON->encode($msg) : $msg);
}
my $seq = 0;
sub request {
    my ($method, $params, @h) = @_;
    return rpc({ jsonrpc => '2.0', id => ++$seq, method => $method,
                 defined $params ? (params => $params) : () }, @h);
}
# tools/call: ($res, $result-or-undef, $data).
sub tool {
    my ($name, $args, @h) = @_;
    my ($res, $d) = request('tools/call', { name => $name, arguments => $args }, @h);
    return ($res, ref $d eq 'HASH' ? $d->{result} : undef, $d);
}
sub tool_error_summary {
    my ($r, $status, $code, $name) = @_;
    my $sc = $r ? $r->{structuredContent} : undef;
    ok($r && $r->{isError} && $sc && $sc->{error} eq $code && $r->{_meta}{'agentshop/status'} == $status, $name)
      or diag($JSON->encode($r // {}));
}
sub rpc_error_without_id {
    my ($res, $d, $status, $code, $name) = @_;
    ok($res->code == $status && ref $d eq 'HASH' && $d->{jsonrpc} eq '2.0' && !exists $d->{id}
       && $d->{error} && $d->{error}{code} == $code && length $d->{error}{message}, $name)
      or diag($res->code . ' ' . substr($res->content, 0, 300));
}
sub tool_error {
    my ($r, $status, $code, $name) = @_;
    my $sc = $r ? $r->{structuredContent} : undef;
    ok($r && $r->{isError} && $sc && $sc->{error} eq $code && length $sc->{message}
       && $r->{_meta}{'agentshop/status'} == $status
       && $JSON->encode($TEXT->decode($r->{content}[0]{text})) eq $JSON->encode($sc), $name)
      or diag($JSON->encode($r // {}));
}

my $init = { protocolVersion => '2025-11-25', capabilities => {},
             clientInfo => { name => 'mcp.t', version => '1.0' } };

# ---- lifecycle: initialize and version negotiation ----
my ($res, $d) = request('initialize', $init);
is($res->code, 200, 'initialize: 200');
like($res->header('Content-Type'), qr{^application/json}, '... as JSON');
is($d->{id}, $seq, '... answering its id');
my $r = $d->{result};
is($r->{protocolVersion}, '2025-11-25', '... the version asked for, 2025-11-25');
is_deeply($r->{capabilities}, { tools => { listChanged => JSON::PP::false } }, '... tools, no list changes');
is($r->{serverInfo}{name}, 'agentshop', '... serverInfo names the server');
ok(length $r->{serverInfo}{version}, '... and its version');
like($r->{instructions} // '', qr/create_order.*confirmation\.url/s, '... with instructions for agents');
ok(!defined $res->header('MCP-Session-Id'), '... and no session id (stateless)');
for my $v ('2025-06-18', '2025-03-26') {
    (undef, $d) = request('initialize', { %$init, protocolVersion => $v });
    is($d->{result}{protocolVersion}, $v, "a client asking for $v gets $v");
}
(undef, $d) = request('initialize', { %$init, protocolVersion => '2099-01-01' });
is($d->{result}{protocolVersion}, '2025-11-25', 'an unknown version is answered with the newest');
(undef, $d) = request('initialize', { capabilities => {} });
is($d->{error}{code}, -32602, 'initialize without protocolVersion: -32602');

# ---- MCP-Protocol-Version ----
($res, $d) = request('ping', undef, 'MCP-Protocol-Version' => '2025-11-25');
is_deeply($d, { jsonrpc => '2.0', id => $seq, result => {} }, 'ping with MCP-Protocol-Version 2025-11-25: {}');
($res, $d) = request('ping', undef, 'MCP-Protocol-Version' => '2025-06-18');
is($res->code, 200, '... 2025-06-18 too');
($res, $d) = request('ping');
is($res->code, 200, '... and no header (taken as 2025-03-26)');
($res, $d) = request('ping', undef, 'MCP-Protocol-Version' => '2024-11-05');
rpc_error_without_id($res, $d, 400, -32000, 'an unsupported MCP-Protocol-Version: 400');
like($d->{error}{message}, qr/2025-11-25/, '... naming the supported versions');
($res, $d) = request('ping', undef, 'MCP-Protocol-Version' => 'banana');
rpc_error_without_id($res, $d, 400, -32000, 'a malformed MCP-Protocol-Version: 400');

# ---- Origin (DNS rebinding) ----
my $own = 'http://' . Apache::TestRequest::hostport();
($res, $d) = request('ping', undef, Origin => 'http://evil.example');
rpc_error_without_id($res, $d, 403, -32000, 'a foreign Origin: 403 with a JSON-RPC error without id');
($res, $d) = request('ping', undef, Origin => 'null');
is($res->code, 403, 'Origin: null: 403');
($res, $d) = request('ping', undef, Origin => "$own.evil.example");
is($res->code, 403, 'an origin that only starts like ours: 403');
($res, $d) = request('ping', undef, Origin => $own);
is($res->code, 200, "the API's own origin ($own): allowed");
($res, $d) = request('ping', undef, Origin => uc($own));
is($res->code, 200, '... compared without case');
($res, $d) = request('ping', undef, Origin => 'https://agent.example');
is($res->code, 200, 'an origin of AgentShopMCPAllowOrigin: allowed');
# DNS rebinding proper: the browser sends the attacker's name as Host too. The
# own origin comes from the virtual host's names, never from Host.
(my $port = $own) =~ s/.*://;
($res, $d) = request('ping', undef, Host => "evil.example:$port", Origin => "http://evil.example:$port");
is($res->code, 403, 'Host and Origin both the attacker\'s name: 403 (the own origin is not taken from Host)');
($res, $d) = request('ping', undef, Origin => 'https://AGENT.example:443');
is($res->code, 200, '... also written with its default port');
($res, $d) = request('ping', undef, Origin => 'http://agent.example');
is($res->code, 403, '... but not under another scheme');

# ---- notifications, responses, the transport's refusals ----
($res) = rpc({ jsonrpc => '2.0', method => 'notifications/initialized' });
is($res->code, 202, 'a notification: 202');
is($res->content, '', '... with no body');
($res) = rpc({ jsonrpc => '2.0', id => 7, result => {} });
is($res->code, 202, 'a JSON-RPC response from the client: 202');
($res, $d) = api('GET', '/mcp', [ Accept => 'text/event-stream' ]);
is($res->code, 405, 'GET /mcp: 405 (no server stream)');
is($res->header('Allow'), 'POST', '... Allow: POST');
($res, $d) = api('DELETE', '/mcp');
is($res->code, 405, 'DELETE /mcp: 405 (no sessions to end)');
($res, $d) = rpc([ { jsonrpc => '2.0', id => 1, method => 'ping' } ]);
rpc_error_without_id($res, $d, 400, -32600, 'a batch: 400 Invalid Request');
($res, $d) = rpc('{"jsonrpc":"2.0","id":1,"method":');
rpc_error_without_id($res, $d, 400, -32700, 'broken JSON: 400 Parse error');
($res, $d) = rpc('{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}');
rpc_error_without_id($res, $d, 400, -32700, 'duplicate keys: 400 Parse error');
($res, $d) = rpc({ jsonrpc => '1.0', id => 1, method => 'ping' });
rpc_error_without_id($res, $d, 400, -32600, 'jsonrpc other than 2.0: 400 Invalid Request');
($res, $d) = rpc({ jsonrpc => '2.0', id => undef, method => 'ping' });
rpc_error_without_id($res, $d, 400, -32600, 'a null id: 400 Invalid Request');
($res, $d) = api('POST', '/mcp', [ 'Content-Type' => 'text/plain' ], '{"jsonrpc":"2.0","id":1,"method":"ping"}');
rpc_error_without_id($res, $d, 415, -32000, 'a body that is not application/json: 415');
($res, $d) = api('POST', '/mcp', [ 'Content-Type' => 'application/json', Accept => 'text/html' ],
                 '{"jsonrpc":"2.0","id":1,"method":"ping"}');
rpc_error_without_id($res, $d, 406, -32000, 'an Accept that allows neither JSON nor SSE: 406');
($res, $d) = request('resources/list');
is($res->code, 200, 'an unknown method: 200 with a JSON-RPC error');
is($d->{id}, $seq, '... answering its id');
is($d->{error}{code}, -32601, '... -32601 Method not found');
($res, $d) = request('tools/call', { name => 'no_such_tool', arguments => {} });
is($d->{error}{code}, -32602, 'an unknown tool: -32602');
($res, $d) = request('tools/call', { name => 'get_product', arguments => [] });
is($d->{error}{code}, -32602, 'arguments that are not an object: -32602');

# A client that accepts only an event stream gets the response as one event.
($res) = api('POST', '/mcp', [ 'Content-Type' => 'application/json', Accept => 'text/event-stream' ],
             '{"jsonrpc":"2.0","id":"s1","method":"ping"}');
like($res->header('Content-Type'), qr{^text/event-stream}, 'Accept: text/event-stream: an SSE stream');
like($res->content, qr/^event: message\ndata: \{"jsonrpc":"2.0","id":"s1","result":\{\}\}\n\n\z/,
     '... of one message event carrying the response');

# ---- tools/list ----
($res, $d) = request('tools/list');
my @tools = @{ $d->{result}{tools} // [] };
is_deeply([ sort map { $_->{name} } @tools ],
          [ sort qw(search_products get_product find_devices compatible_parts check_compatibility
                    ask_question get_mandate create_quote create_order get_order cancel_order
                    start_return) ], 'tools/list: the twelve tools, one per REST operation');
my %tool = map { $_->{name} => $_ } @tools;
ok(!grep({ !($_->{inputSchema}{type} eq 'object' && ref $_->{inputSchema}{properties} eq 'HASH'
             && !$_->{inputSchema}{additionalProperties}) } @tools),
   '... each input schema an object schema without additional properties');
ok(!grep({ !($_->{outputSchema}{type} eq 'object' && ref $_->{outputSchema}{anyOf} eq 'ARRAY') } @tools),
   '... and each an output schema');
ok(!grep({ !(length $_->{title} && length $_->{description}
             && is_bool($_->{annotations}{readOnlyHint}) && is_bool($_->{annotations}{destructiveHint})
             && is_bool($_->{annotations}{idempotentHint}) && is_bool($_->{annotations}{openWorldHint})) } @tools),
   '... each with a title, a description and annotations');
ok($tool{search_products}{annotations}{readOnlyHint} && !$tool{create_order}{annotations}{readOnlyHint}
   && $tool{cancel_order}{annotations}{destructiveHint}, '... reads are read-only, cancelling is destructive');
is_deeply([ sort @{ $tool{create_order}{inputSchema}{required} } ], [qw(idempotency_key quote_id reason)],
          'create_order requires quote_id, reason and idempotency_key');
is($tool{create_quote}{inputSchema}{properties}{quantity}{maximum}, 10, 'create_quote: quantity at most 10 (spec 8)');
is($tool{create_order}{inputSchema}{properties}{reason}{minLength}, 20, 'create_order: reason 20 to 500 characters');
($res, $d) = request('tools/list', { cursor => 'x' });
is($d->{error}{code}, -32602, 'tools/list with a cursor it never gave: -32602');

# ---- public tools are the REST operations ----
my ($p) = grep { $_->{sku} } @{ demo_data('products') };
($res, $r) = tool('get_product', { sku => $p->{sku} });
my (undef, $rest) = api_get("/products/$p->{sku}");
ok($r && !$r->{isError}, 'get_product: a result');
is($r->{_meta}{'agentshop/status'}, 200, '... REST status 200 in _meta');
is_deeply($r->{structuredContent}, $rest, '... structuredContent is GET /products/{sku}');
is_deeply($TEXT->decode($r->{content}[0]{text}), $rest, '... and so is the text');
($res, $r) = tool('get_product', { sku => 'NO-SUCH-SKU' });
tool_error($r, 404, 'NOT_FOUND', 'get_product of an unknown sku: the REST 404 NOT_FOUND object');
($res, $r) = tool('get_product', { sku => 5 });
tool_error($r, 400, 'VALIDATION_ERROR', 'an argument of the wrong JSON type: 400 VALIDATION_ERROR');
is($r->{structuredContent}{field}, 'sku', '... naming the argument');
($res, $r) = tool('get_product', { sku => $p->{sku}, colour => 'red' });
tool_error($r, 400, 'VALIDATION_ERROR', 'an unknown argument: 400 VALIDATION_ERROR');
is($r->{structuredContent}{field}, 'colour', '... naming it');
($res, $r) = tool('get_product', {});
is($r->{structuredContent}{field}, 'sku', 'a missing required argument: VALIDATION_ERROR naming it');
($res, $r) = tool('search_products', { limit => 500 });
tool_error($r, 400, 'VALIDATION_ERROR', 'a value outside the REST limits: the REST validation error');
is($r->{structuredContent}{field}, 'limit', '... naming the argument');
($res, $r) = tool('search_products', { q => 'filter', limit => 3, max_price => 500.5, verified_only => JSON::PP::true,
                                       weights => { price => 1 }, detail => 'full' });
(undef, $rest) = api_get('/search?q=filter&limit=3&max_price=500.50&verified_only=true&weights=price:1');
is_deeply($r->{structuredContent}, $rest, 'search_products with numbers, booleans and weights: GET /search');
($res, $r) = tool('search_products', { q => 'filter', limit => 3, weights => undef, detail => 'full' });
(undef, $rest) = api_get('/search?q=filter&limit=3');
is_deeply($r->{structuredContent}, $rest, '... weights null: the default weights, as in a request body');
($res, $r) = tool('find_devices', { q => 'dyson' });
(undef, $rest) = api_get('/devices?q=dyson');
is_deeply($r->{structuredContent}, $rest, 'find_devices: GET /devices');

# ---- search over MCP: compact by default, a summary as text ----
# What a model pays for a typical search, the whole tool result in bytes: as
# every search answered before (the full GET /search body twice, as
# structuredContent and as its JSON text: a 2025-03-26 client asking for
# detail full still gets exactly that) against the default for a client of
# 2025-06-18 or later (the compact form once, and a summary).
my @v11 = ('MCP-Protocol-Version' => '2025-11-25');
my ($full_res, $full) = tool('search_products', { q => 'hand soap', detail => 'full' });
(undef, $rest) = api_get('/search?q=hand%20soap');
is_deeply($full->{structuredContent}, $rest, 'search_products detail full: the GET /search body');
is_deeply($TEXT->decode($full->{content}[0]{text}), $rest, '... and, to a 2025-03-26 client, its JSON as text too');
ok(@{ $rest->{results} } >= 5, '"hand soap" finds several products (' . scalar(@{ $rest->{results} }) . ')');
my ($small_res, $small) = tool('search_products', { q => 'hand soap' }, @v11);
my $sc = $small->{structuredContent};
my ($before, $after) = (length $JSON->encode($full), length $JSON->encode($small));
ok($after * 4 < $before, "a default search costs less than a quarter of the full one: $after bytes against $before")
  or diag($JSON->encode($small));
is($sc->{detail}, 'compact', '... the compact form');
is_deeply([ map { $_->{sku} } @{ $sc->{results} } ], [ map { $_->{sku} } @{ $rest->{results} } ],
          '... with the same products in the same order');
is_deeply([ map { $_->{sku} } @{ $sc->{excluded} } ], [ map { $_->{sku} } @{ $rest->{excluded} } ], '... the same excluded');
is($sc->{count}, $rest->{count}, '... the same count');
my ($c0, $f0) = ($sc->{results}[0], $rest->{results}[0]);
is_deeply([ @{ $c0->{best_offer} }{qw(offer_id price_cents delivery_by score merchant)} ],
          [ @{ $f0->{best_offer} }{qw(offer_id price_cents delivery_by score)}, $f0->{best_offer}{merchant}{name} ],
          "... the best offer's id, price, delivery, score and merchant");
is_deeply([ @$c0{qw(sku name brand verification_status)} ],
          [ @$f0{qw(sku name brand verification_status)} ], '... the product\'s sku, name, brand and verification');
my $text = $small->{content}[0]{text};
ok(!eval { $TEXT->decode($text); 1 }, '... its text is not the JSON again');
my @lines = grep { /^\d+\. / } split /\n/, $text;
is(scalar @lines, scalar @{ $sc->{results} }, '... but one line per result');
like($lines[0] // '', qr/^1\. \Q$c0->{sku}\E \| .*offer \Q$c0->{best_offer}{offer_id}\E/, '... naming its sku and best offer');
like($text, qr/^Search "hand soap": \Q$rest->{count}\E result/, '... after a line of counts');
note("bytes of a default search for \"hand soap\": $after; detail full as before: $before");
(undef, $r) = tool('search_products', { q => 'hand soap' });
is_deeply($TEXT->decode($r->{content}[0]{text}), $r->{structuredContent},
          'a 2025-03-26 client (no structuredContent in its revision): the compact JSON as text');
(undef, $r) = tool('search_products', { q => 'hand soap', detail => 'everything' }, @v11);
tool_error_summary($r, 400, 'VALIDATION_ERROR', 'detail other than compact or full: 400 VALIDATION_ERROR');
is($r->{structuredContent}{field}, 'detail', '... naming it');
is($r->{content}[0]{text}, "Error 400 VALIDATION_ERROR (field detail): $r->{structuredContent}{message}",
   '... in one line of text');
(undef, $r) = tool('get_product', { sku => $p->{sku} }, @v11);
like($r->{content}[0]{text}, qr/^sku: \Q$p->{sku}\E\n(.*\n)?name: /, 'get_product to a 2025-11-25 client: a summary of its facts');
my $best = $r->{structuredContent}{offers}{ranked}[0];
like($r->{content}[0]{text}, qr/\n  ranked:\n    - offer_id: \Q$best->{offer_id}\E, .*price_cents: \Q$best->{price_cents}\E/,
     '... its offers one a line, with their ids and prices') if $best;
ok(length $r->{content}[0]{text} < length $JSON->encode($r->{structuredContent}), '... shorter than the data');

# ---- agent tools: same keys and headers as REST ----
my ($user, $key) = new_agent();
new_mandate($user, per_order => 1000, monthly => 10000, confirm_above => 1000);
my @auth = (Authorization => "Bearer $key", 'Service-Agent' => 'mcp-test/1.0');
($res, $r) = tool('get_mandate', {});
tool_error($r, 403, 'AGENT_UNIDENTIFIED', 'get_mandate without a key: the REST 403 AGENT_UNIDENTIFIED object');
($res, $r) = tool('get_mandate', {}, Authorization => "Bearer $key");
tool_error($r, 403, 'AGENT_UNIDENTIFIED', '... and without Service-Agent');
($res, $r) = tool('get_mandate', {}, @auth);
(undef, $rest) = api_get('/mandates/current', agent_headers($key));
is_deeply($r->{structuredContent}, $rest, 'get_mandate with the key: GET /mandates/current');
($res, $r) = tool('get_order', { order_id => 'ord_nosuchorder' }, @auth);
tool_error($r, 404, 'NOT_FOUND', 'get_order of an unknown order: 404 NOT_FOUND');
($res, $r) = tool('get_order', { order_id => 'a/b' }, @auth);
tool_error($r, 400, 'VALIDATION_ERROR', 'a path argument with a slash: 400 VALIDATION_ERROR');

my ($pv, $off) = buyable_offer(min_stock => 10, max_cents => 3000);
sub quote {
    my (undef, $qr) = tool('create_quote', { sku => $pv->{sku}, offer_id => $off->{offer_id} }, @auth);
    return $qr->{structuredContent};
}
my $q = quote();
is($q->{sku}, $pv->{sku}, 'create_quote: a quote');
my $reason = 'Bought through MCP for the replay test, best-ranked offer.';
my %order = (quote_id => $q->{id}, reason => $reason, idempotency_key => "mcp-$$-1");
($res, $r) = tool('create_order', \%order, @auth);
my $o = $r->{structuredContent};
is($r->{_meta}{'agentshop/status'}, 201, 'create_order: 201');
is($o->{status}, 'placed', '... placed');
($res, $r) = tool('create_order', \%order, @auth);
is($r->{structuredContent}{id}, $o->{id}, 'the same call again: the same order (idempotent replay)');
ok($r->{_meta}{'agentshop/replayed'}, '... marked as replayed');
is($r->{_meta}{'agentshop/status'}, 201, '... with the first status');
($res, $rest) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => "mcp-$$-1"),
                          { quote_id => $q->{id}, reason => $reason });
is($rest->{id}, $o->{id}, '... and REST with the same Idempotency-Key replays it too');
($res, $r) = tool('create_order', { %order, reason => "$reason Changed." }, @auth);
tool_error($r, 422, 'IDEMPOTENCY_KEY_REUSED', 'the key with other arguments: 422 IDEMPOTENCY_KEY_REUSED');
($res, $r) = tool('create_order', { quote_id => quote()->{id}, reason => $reason }, @auth);
tool_error($r, 400, 'IDEMPOTENCY_KEY_REQUIRED', 'create_order without idempotency_key: 400 IDEMPOTENCY_KEY_REQUIRED');
is($r->{structuredContent}{field}, 'idempotency_key', '... naming the argument');
($res, $r) = tool('create_order', { quote_id => quote()->{id}, reason => $reason }, @auth,
                  'Idempotency-Key' => "mcp-$$-header");
is($r->{_meta}{'agentshop/status'}, 201, '... or taking the Idempotency-Key header instead');
($res, $r) = tool('create_order', { %order, idempotency_key => "bad key" }, @auth);
tool_error($r, 400, 'VALIDATION_ERROR', 'an idempotency_key with a space: 400 VALIDATION_ERROR');
($res, $r) = tool('cancel_order', { order_id => $o->{id} }, @auth);
is($r->{structuredContent}{status}, 'cancelled', 'cancel_order: cancelled');
($res, $r) = tool('cancel_order', { order_id => $o->{id} }, @auth);
is($r->{structuredContent}{status}, 'cancelled', '... and again: the same');

# Above the confirm-above threshold: not an error, the agent is told what to do.
my ($u2, $k2) = new_agent();
new_mandate($u2, per_order => 1000, monthly => 10000, confirm_above => 0.01);
my @auth2 = (Authorization => "Bearer $k2", 'Service-Agent' => 'mcp-test/1.0');
(undef, $r) = tool('create_quote', { sku => $pv->{sku}, offer_id => $off->{offer_id} }, @auth2);
(undef, $r) = tool('create_order', { quote_id => $r->{structuredContent}{id}, reason => $reason,
                                     idempotency_key => "mcp-$$-confirm" }, @auth2);
ok($r && !$r->{isError}, 'create_order above the threshold: not an error');
is($r->{_meta}{'agentshop/status'}, 202, '... REST status 202');
is($r->{structuredContent}{error}, 'CONFIRMATION_REQUIRED', '... the 202 body');
my $url = $r->{structuredContent}{confirmation}{url} // 'none';
like($r->{content}[1]{text} // '', qr/human must approve.*\Q$url\E/s, '... and a text telling a human to open confirmation.url');

# ---- the tools take and give what their REST operations take and give ----
# The served tools/list and the served OpenAPI document, compared argument by
# argument (names, types, limits, enums, patterns, required, properties), one
# argument name against the same name in every tool, and each output schema
# against the operation's response schemas, by t/js/tools-match-openapi.mjs.
my $top = Apache::Test::vars('serverroot') . '/..';
my $var = Apache::Test::vars('serverroot') . '/var';
(undef, $d) = request('tools/list');
my ($ores) = api_get('/openapi.json');
{
    open my $fh, '>', "$var/mcp-tools.json" or die $!;
    print $fh $JSON->encode($d->{result} // {});
    open my $oh, '>', "$var/mcp-openapi.json" or die $!;
    print $oh $ores->content;
}
my $cmp = `node '$top/t/js/tools-match-openapi.mjs' '$var/mcp-openapi.json' '$var/mcp-tools.json' 2>&1`;
my $diffs = eval { $JSON->decode($cmp) } // {};
is(scalar(grep { !/^\(/ } keys %$diffs), 12, 'each of the 12 tools has its OpenAPI operation (same operationId)') or diag($cmp);
for my $name (sort grep { !/^\(/ } keys %$diffs) {
    ok(!@{ $diffs->{$name} }, "$name: its input schema matches the operation's parameters and body, "
       . "its output schema the operation's responses")
      or diag(join "\n", @{ $diffs->{$name} });
}
ok($diffs->{'(across tools)'} && !@{ $diffs->{'(across tools)'} },
   'an argument of several tools (order_id, weights, sku, device...) has one schema in all of them')
  or diag(join "\n", @{ $diffs->{'(across tools)'} // ['no report'] });

# ---- the official TypeScript SDK ----
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
ok($step{search_products}{text_bytes} < $step{search_products}{data_bytes}, '... with a summary shorter than its data as text');
ok($sdk->{full_has_components} && $step{search_products_full}{data_bytes} > 3 * $step{search_products}{data_bytes},
   "... and detail full is GET /search's body, offers' components and all")
  or diag("components: " . ($sdk->{full_has_components} ? 'yes' : 'no') . "; bytes full $step{search_products_full}{data_bytes}, "
          . "compact $step{search_products}{data_bytes}");
like($step{start_return}{text} // '', qr/^Error \d{3} [A-Z_]+/, 'SDK: an error\'s text is one line naming its code');
ok($step{get_order_missing}{isError} && $sdk->{missing_error} eq 'NOT_FOUND', 'SDK: a REST error is a tool error with the REST object');
is($sdk->{unknown_tool_code}, -32602, 'SDK: an unknown tool is a protocol error -32602');
ok($sdk->{ping}, 'SDK: ping');
(undef, $rest) = api_get("/orders/" . ($sdk->{order}{id} // 'none'), agent_headers($k3));
is($rest->{status}, 'cancelled', 'the order the SDK cancelled is cancelled over REST too');

done_testing();
