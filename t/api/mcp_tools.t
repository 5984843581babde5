# MCP's tools (docs/mcp.md): tools/list, the public tools as their REST
# operations, the compact search and the summaries as text, and every tool's
# input and output schemas against its OpenAPI operation
# (t/js/tools-match-openapi.mjs). The protocol itself: mcp.t.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use JSON::PP;
use Apache::Test ();
use AgentShop::Test;
use AgentShop::MCP;

my $JSON = JSON::PP->new->utf8->canonical;
my $TEXT = JSON::PP->new->canonical;    # for text already decoded into characters

# ---- tools/list ----
{
    my (undef, $d) = request('tools/list');
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
    is_deeply([ sort @{ $tool{create_order}{inputSchema}{required} // [] } ], [qw(idempotency_key quote_id reason)],
              'create_order requires quote_id, reason and idempotency_key');
    is($tool{create_quote}{inputSchema}{properties}{quantity}{maximum}, 10, 'create_quote: quantity at most 10 (spec 8)');
    is($tool{create_order}{inputSchema}{properties}{reason}{minLength}, 20, 'create_order: reason 20 to 500 characters');
}
{
    my (undef, $d) = request('tools/list', { cursor => 'x' });
    is($d->{error}{code}, -32602, 'tools/list with a cursor it never gave: -32602');
}

# ---- public tools are the REST operations ----
my ($p) = grep { $_->{sku} } @{ demo_data('products') };
{
    my (undef, $r) = tool('get_product', { sku => $p->{sku} });
    my (undef, $rest) = api_get("/products/$p->{sku}");
    ok($r && !$r->{isError}, 'get_product: a result');
    is($r->{_meta}{'agentshop/status'}, 200, '... REST status 200 in _meta');
    is_deeply($r->{structuredContent}, $rest, '... structuredContent is GET /products/{sku}');
    is_deeply(eval { $TEXT->decode($r->{content}[0]{text}) }, $rest, '... and so is the text');
}
{
    my (undef, $r) = tool('get_product', { sku => 'NO-SUCH-SKU' });
    tool_error($r, 404, 'NOT_FOUND', 'get_product of an unknown sku: the REST 404 NOT_FOUND object');
}
{
    my (undef, $r) = tool('get_product', { sku => 5 });
    tool_error($r, 400, 'VALIDATION_ERROR', 'an argument of the wrong JSON type: 400 VALIDATION_ERROR');
    is($r->{structuredContent}{field}, 'sku', '... naming the argument');
}
{
    my (undef, $r) = tool('get_product', { sku => $p->{sku}, colour => 'red' });
    tool_error($r, 400, 'VALIDATION_ERROR', 'an unknown argument: 400 VALIDATION_ERROR');
    is($r->{structuredContent}{field}, 'colour', '... naming it');
}
{
    my (undef, $r) = tool('get_product', {});
    is($r->{structuredContent}{field}, 'sku', 'a missing required argument: VALIDATION_ERROR naming it');
}
{
    my (undef, $r) = tool('search_products', { limit => 500 });
    tool_error($r, 400, 'VALIDATION_ERROR', 'a value outside the REST limits: the REST validation error');
    is($r->{structuredContent}{field}, 'limit', '... naming the argument');
}
{
    my (undef, $r) = tool('search_products', { q => 'filter', limit => 3, max_price => 500.5, verified_only => JSON::PP::true,
                                               weights => { price => 1 }, detail => 'full' });
    my (undef, $rest) = api_get('/search?q=filter&limit=3&max_price=500.50&verified_only=true&weights=price:1');
    is_deeply($r->{structuredContent}, $rest, 'search_products with numbers, booleans and weights: GET /search');
}
{
    my (undef, $r) = tool('search_products', { q => 'filter', limit => 3, weights => undef, detail => 'full' });
    my (undef, $rest) = api_get('/search?q=filter&limit=3');
    is_deeply($r->{structuredContent}, $rest, '... weights null: the default weights, as in a request body');
}
{
    my (undef, $r) = tool('find_devices', { q => 'dyson' });
    my (undef, $rest) = api_get('/devices?q=dyson');
    is_deeply($r->{structuredContent}, $rest, 'find_devices: GET /devices');
}

# ---- search over MCP: compact by default, a summary as text ----
# What a model pays for a typical search, the whole tool result in bytes: as
# every search answered before (the full GET /search body twice, as
# structuredContent and as its JSON text: a 2025-03-26 client asking for
# detail full still gets exactly that) against the default for a client of
# 2025-06-18 or later (the compact form once, and a summary).
my @v11 = ('MCP-Protocol-Version' => '2025-11-25');
{
    my (undef, $full) = tool('search_products', { q => 'hand soap', detail => 'full' });
    my (undef, $rest) = api_get('/search?q=hand%20soap');
    $rest //= {};
    is_deeply($full->{structuredContent}, $rest, 'search_products detail full: the GET /search body');
    is_deeply(eval { $TEXT->decode($full->{content}[0]{text}) }, $rest, '... and, to a 2025-03-26 client, its JSON as text too');
    my @found = @{ $rest->{results} // [] };
    ok(@found >= 5, '"hand soap" finds several products (' . scalar(@found) . ')');
    my (undef, $small) = tool('search_products', { q => 'hand soap' }, @v11);
    my $sc = $small->{structuredContent} // {};
    my ($before, $after) = (length $JSON->encode($full // {}), length $JSON->encode($small // {}));
    ok($after * 4 < $before, "a default search costs less than a quarter of the full one: $after bytes against $before")
      or diag($JSON->encode($small // {}));
    is($sc->{detail}, 'compact', '... the compact form');
    is_deeply([ map { $_->{sku} } @{ $sc->{results} // [] } ], [ map { $_->{sku} } @found ],
              '... with the same products in the same order');
    is_deeply([ map { $_->{sku} } @{ $sc->{excluded} // [] } ], [ map { $_->{sku} } @{ $rest->{excluded} // [] } ],
              '... the same excluded');
    is($sc->{count}, $rest->{count}, '... the same count');
    my ($c0, $f0) = ($sc->{results}[0] // {}, $found[0] // {});
    is_deeply([ @{ $c0->{best_offer} // {} }{qw(offer_id price_cents delivery_by score merchant)} ],
              [ @{ $f0->{best_offer} // {} }{qw(offer_id price_cents delivery_by score)}, $f0->{best_offer}{merchant}{name} ],
              "... the best offer's id, price, delivery, score and merchant");
    is_deeply([ @$c0{qw(sku name brand verification_status)} ],
              [ @$f0{qw(sku name brand verification_status)} ], '... the product\'s sku, name, brand and verification');
    my $text = $small->{content}[0]{text} // '';
    ok(!eval { $TEXT->decode($text); 1 }, '... its text is not the JSON again');
    my @lines = grep { /^\d+\. / } split /\n/, $text;
    is(scalar @lines, scalar @{ $sc->{results} // [] }, '... but one line per result');
    like($lines[0] // '', qr/^1\. \Q$c0->{sku}\E \| .*offer \Q$c0->{best_offer}{offer_id}\E/, '... naming its sku and best offer');
    like($text, qr/^Search "hand soap": \Q$rest->{count}\E result/, '... after a line of counts');
    note("bytes of a default search for \"hand soap\": $after; detail full as before: $before");
}
{
    my (undef, $r) = tool('search_products', { q => 'hand soap' });
    is_deeply(eval { $TEXT->decode($r->{content}[0]{text}) }, $r->{structuredContent},
              'a 2025-03-26 client (no structuredContent in its revision): the compact JSON as text');
}
{
    my (undef, $r) = tool('search_products', { q => 'hand soap', detail => 'everything' }, @v11);
    tool_error_summary($r, 400, 'VALIDATION_ERROR', 'detail other than compact or full: 400 VALIDATION_ERROR');
    is($r->{structuredContent}{field}, 'detail', '... naming it');
    is($r->{content}[0]{text}, "Error 400 VALIDATION_ERROR (field detail): " . ($r->{structuredContent}{message} // ''),
       '... in one line of text');
}
{
    my (undef, $r) = tool('get_product', { sku => $p->{sku} }, @v11);
    my $text = $r->{content}[0]{text} // '';
    like($text, qr/^sku: "\Q$p->{sku}\E"\n(.*\n)?name: "/, 'get_product to a 2025-11-25 client: a summary of its facts');
    my $best = $r->{structuredContent}{offers}{ranked}[0];
    like($text, qr/\n  ranked:\n    - offer_id: "\Q$best->{offer_id}\E", .*price_cents: \Q$best->{price_cents}\E/,
         '... its offers one a line, with their ids and prices') if $best;
    ok(length $text < length $JSON->encode($r->{structuredContent} // {}), '... shorter than the data');
}

# ---- the tools take and give what their REST operations take and give ----
# The served tools/list and the served OpenAPI document, compared argument by
# argument (names, types, limits, enums, patterns, required, properties), one
# argument name against the same name in every tool, and each output schema
# against the operation's response schemas, by t/js/tools-match-openapi.mjs.
{
    my $top = Apache::Test::vars('serverroot') . '/..';
    my $var = Apache::Test::vars('serverroot') . '/var';
    my (undef, $d) = request('tools/list');
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
}

done_testing();
