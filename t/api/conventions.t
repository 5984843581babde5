# HTTP's conventions as clients and browsers expect them (issue 19;
# docs/api.md, "Caching, compression and CORS"): validators and 304 on the
# public reads, no-store on everything else; compression negotiated with
# Vary, never on a person's page; CORS for public reads from any origin and
# for agent endpoints from the listed origins only, with preflights, checked
# from pages of two other origins in Chromium; Location on what a POST
# created.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use Apache::TestRequest ();
use IO::Socket::INET;
use IO::Uncompress::Gunzip qw(gunzip $GunzipError);
use LWP::UserAgent;
use AgentShop::Test;

my $hostport = Apache::TestRequest::hostport();
my $api = "http://$hostport/v1";
# Requests api() does not log for the OpenAPI check: OPTIONS (transport, not
# an operation of the document) and compressed bodies.
my $raw = LWP::UserAgent->new(keep_alive => 0);
sub raw { my ($m, $path, @h) = @_; $raw->request(HTTP::Request->new($m, "$api$path", [@h])) }

my ($user, $key) = new_agent();
new_mandate($user, per_order => 1000, monthly => 5000, confirm_above => 1000);
my $H = agent_headers($key);
my ($part, $slug) = live_part();
ok($part, "a part that fits $slug") or BAIL_OUT('no live part in the demo catalogue');

# ---- validators on every public read ----
my @reads = ('', '/search?q=hand+soap&limit=3', "/search?q=filters+for+my+$slug",
             "/products/$part->{sku}", '/devices?q=dyson', "/devices/$slug/compatible",
             '/openapi.json', '/docs', '/docs/errors', '/docs/errors/NOT_FOUND', '/webauthn.js');
for my $path (@reads) {
    my ($res) = api_get($path);
    is($res->code, 200, "GET /v1$path: 200");
    my $etag = $res->header('ETag') // '';
    like($etag, qr/^"[A-Za-z0-9_-]{22}"$/, '... with a strong ETag');
    like($res->header('Cache-Control') // '', qr/^(no-cache|public, max-age=\d+)$/,
         '... that a client may keep and revalidate');
    like($res->header('Vary') // '', qr/Accept-Encoding/, '... varying with the encoding');
    my ($again) = api_get($path, [ 'If-None-Match' => $etag ]);
    is($again->code, 304, '... If-None-Match with it: 304');
    is($again->content, '', '... with no body');
    is($again->header('ETag') // '', $etag, '... and the same ETag');
    ($again) = api_get($path, [ 'If-None-Match' => qq{"nope", W/$etag} ]);
    is($again->code, 304, '... in a list, weak: 304 (the weak comparison of If-None-Match)');
    ($again) = api('HEAD', $path, [ 'If-None-Match' => $etag ]);
    is($again->code, 304, '... HEAD likewise');
    ($again) = api_get($path, [ 'If-None-Match' => '"AAAAAAAAAAAAAAAAAAAAAA"' ]);
    is($again->code, 200, '... another tag: the whole answer');
    is($again->header('ETag') // '', $etag, '... the same answer, the same tag');
}
my ($star) = api_get('/devices', [ 'If-None-Match' => '*' ]);
is($star->code, 304, 'If-None-Match: * on an answer that exists: 304');

# the tag follows the answer: another query, another tag; an order that
# takes stock changes the product's view
my %tags = map { (api_get($_))[0]->header('ETag') => 1 } '/search?q=soap', '/search?q=soap&limit=2',
  '/search?q=soap&sort=price';
is(scalar keys %tags, 3, 'three different searches: three tags');

# ---- answers nobody else may keep: no validator, no-store ----
my ($res, $v) = api_get('/mandates/current', $H);
is($res->code, 200, 'the mandate, with the agent key: 200');
is($res->header('Cache-Control'), 'no-store', '... no-store');
ok(!defined $res->header('ETag'), '... no ETag');
($res, $v) = api_get('/products/NO-SUCH-SKU');
is($res->code, 404, 'an unknown product: 404');
is($res->header('Cache-Control'), 'no-store', '... an error is not kept');
ok(!defined $res->header('ETag'), '... no ETag');
($res) = api_get('/search?q=soap&limit=0');
is($res->code, 400, 'a bad search: 400');
is($res->header('Cache-Control'), 'no-store', '... not kept either');

# ---- Location on what a POST created, replays too ----
my ($qres, $quote) = post_json('/quotes', $H, { sku => $part->{sku}, device => $slug });
is($qres->code, 201, 'a quote: 201');
ok(!defined $qres->header('Location'), '... without Location: a quote has no URL of its own');
my ($view_before) = api_get("/products/$part->{sku}");
my $ikey = "conv-$$-" . time;
($res, my $order) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => $ikey),
                              { quote_id => $quote->{id}, reason => 'Testing the Location header of a new order.' });
is($res->code, 201, 'an order: 201');
is($res->header('Location'), "$api/orders/$order->{id}", '... Location: its URL');
my ($loc) = api_get("/orders/$order->{id}", $H);
is($loc->code, 200, '... which answers the agent');
($res) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => $ikey),
                   { quote_id => $quote->{id}, reason => 'Testing the Location header of a new order.' });
is($res->header('Idempotent-Replayed'), 'true', 'the same order again: a replay');
is($res->header('Location'), "$api/orders/$order->{id}", '... with the same Location');
my ($view_after) = api_get("/products/$part->{sku}", [ 'If-None-Match' => $view_before->header('ETag') ]);
is($view_after->code, 200, "the product's view after the order took stock: the old tag gives the whole answer");
isnt($view_after->header('ETag'), $view_before->header('ETag'), '... under a new tag');

# above the confirm-above threshold: 202, the order exists and has its URL
my ($cu, $ckey) = new_agent();
new_mandate($cu, per_order => 1000, monthly => 5000, confirm_above => 1);
($qres, $quote) = post_json('/quotes', agent_headers($ckey), { sku => $part->{sku}, device => $slug });
($res, my $pending) = post_json('/orders', agent_headers($ckey, 'Idempotency-Key' => "$ikey-c"),
                                { quote_id => $quote->{id}, reason => 'Testing the Location header of a new order.' });
is($res->code, 202, 'an order awaiting its person: 202');
is($res->header('Location'), "$api/orders/$pending->{order_id}", '... Location: its URL');

ctl('order', 'ship', $order->{id});
($res, my $ret) = post_json('/returns', agent_headers($key, 'Idempotency-Key' => "$ikey-r"),
                            { order_id => $order->{id}, reason_code => 'defective' });
is($res->code, 201, 'a return: 201');
is($res->header('Location'), "$api/returns/$ret->{id}/label", "... Location: its label's URL");
($loc) = api_get("/returns/$ret->{id}/label", $H);
is($loc->code, 200, '... which the agent key opens');

# ---- compression ----
my $gz = raw('GET', '/search?q=hand+soap&limit=3', 'Accept-Encoding' => 'gzip');
is($gz->header('Content-Encoding') // '', 'gzip', 'a search asked for with gzip: gzip');
like($gz->header('Vary') // '', qr/Accept-Encoding/, '... Vary: Accept-Encoding');
my $plain = raw('GET', '/search?q=hand+soap&limit=3');
ok(!defined $plain->header('Content-Encoding'), 'without Accept-Encoding: not compressed');
my $body = $gz->content;
my $unzipped;
gunzip(\$body, \$unzipped) or diag $GunzipError;
is($unzipped, $plain->content, '... the same JSON either way');
ok(length $body < length $plain->content, '... smaller compressed (' . length($body) . ' < ' . length($plain->content) . ' bytes)');
my $gtag = $gz->header('ETag') // '';
like($gtag, qr/-gzip"$/, "... the compressed answer's ETag marks it ($gtag)");
my $r304 = raw('GET', '/search?q=hand+soap&limit=3', 'Accept-Encoding' => 'gzip', 'If-None-Match' => $gtag);
is($r304->code, 304, '... and validates the kept copy: 304');
my $br = raw('GET', '/openapi.json', 'Accept-Encoding' => 'br');
is($br->header('Content-Encoding') // '', 'br', 'the OpenAPI document with br: brotli');
ok(length($br->content) * 3 < length(raw('GET', '/openapi.json')->content), '... under a third of its size');
my $help = raw('GET', '/docs', 'Accept-Encoding' => 'gzip');
is($help->header('Content-Encoding') // '', 'gzip', 'a help page (HTML): compressed');
my ($label_url) = $ret->{label}{url} =~ m{/v1(/returns/.*)$};
my $label = raw('GET', $label_url, 'Accept-Encoding' => 'gzip, br');
is($label->code, 200, "a person's page behind a signed link (the return label)");
ok(!defined $label->header('Content-Encoding'), '... never compressed (BREACH)');

# ---- CORS ----
my $other = 'https://pages.example';
$res = raw('GET', '/search?q=soap', Origin => $other);
is($res->header('Access-Control-Allow-Origin') // '', '*', 'a public read from any origin: Access-Control-Allow-Origin *');
like($res->header('Access-Control-Expose-Headers') // '', qr/\bETag\b/, '... its ETag readable by the page');
$res = raw('GET', '/mandates/current', Origin => 'https://agent.example', Authorization => "Bearer $key");
is($res->header('Access-Control-Allow-Origin') // '', 'https://agent.example', 'an agent endpoint from a listed origin: allowed');
like($res->header('Vary') // '', qr/\bOrigin\b/, '... Vary: Origin');
like($res->header('Access-Control-Expose-Headers') // '', qr/\bLocation\b.*\bRetry-After\b.*\bIdempotent-Replayed\b/,
     '... Location, Retry-After and Idempotent-Replayed readable');
$res = raw('GET', '/mandates/current', Origin => 'http://localhost:3000', Authorization => "Bearer $key");
is($res->header('Access-Control-Allow-Origin') // '', 'http://localhost:3000', '... one listed under the former directive name too');
$res = raw('GET', '/mandates/current', Origin => $other, Authorization => "Bearer $key");
ok(!defined $res->header('Access-Control-Allow-Origin'), 'from an origin not listed: no Access-Control-Allow-Origin');

my @pre = ('Access-Control-Request-Method' => 'POST',
           'Access-Control-Request-Headers' => 'authorization, content-type, idempotency-key, service-agent');
$res = raw('OPTIONS', '/orders', Origin => 'https://agent.example', @pre);
is($res->code, 204, 'a preflight for POST /orders from a listed origin: 204');
is($res->header('Access-Control-Allow-Origin') // '', 'https://agent.example', '... that origin');
is($res->header('Access-Control-Allow-Methods') // '', 'POST', '... POST');
my $allowed = $res->header('Access-Control-Allow-Headers') // '';
for my $h (qw(Authorization Service-Agent Idempotency-Key Content-Type MCP-Protocol-Version)) {
    like($allowed, qr/\b\Q$h\E\b/i, "... $h may be sent");
}
like($res->header('Access-Control-Max-Age') // '', qr/^\d+$/, '... kept by the browser a while');
$res = raw('OPTIONS', '/mcp', Origin => 'https://agent.example', 'Access-Control-Request-Method' => 'POST',
           'Access-Control-Request-Headers' => 'content-type, mcp-protocol-version, authorization');
is($res->code, 204, 'a preflight for POST /mcp with MCP-Protocol-Version: 204');
$res = raw('OPTIONS', '/orders', Origin => $other, @pre);
is($res->code, 403, 'the same preflight from an origin not listed: 403');
ok(!defined $res->header('Access-Control-Allow-Origin'), '... without Access-Control-Allow-Origin');
like($res->content, qr/AgentShopCORSAllowOrigin/, '... saying which directive lists origins');
$res = raw('OPTIONS', '/orders', Origin => 'https://agent.example', 'Access-Control-Request-Method' => 'DELETE');
is($res->code, 405, 'a preflight for a method the endpoint does not take: 405');
$res = raw('OPTIONS', '/orders', Origin => 'https://agent.example', 'Access-Control-Request-Method' => 'POST',
           'Access-Control-Request-Headers' => 'x-forwarded-for');
is($res->code, 403, 'a preflight asking for a header the API does not take: 403');
like($res->content, qr/x-forwarded-for/, '... naming it');
$res = raw('OPTIONS', '/search', Origin => $other, 'Access-Control-Request-Method' => 'GET',
           'Access-Control-Request-Headers' => 'if-none-match');
is($res->code, 204, 'a preflight for a public read from any origin: 204');
is($res->header('Access-Control-Allow-Origin') // '', '*', '... *');
$res = raw('OPTIONS', '/confirmations/cnf_x', Origin => 'https://agent.example', 'Access-Control-Request-Method' => 'POST');
is($res->code, 403, "a preflight for a person's confirmation: refused to every other origin");
$res = raw('OPTIONS', '/search');
is($res->code, 204, 'OPTIONS without a preflight: 204');
is($res->header('Allow') // '', 'GET, HEAD, OPTIONS', '... with Allow');

# from real pages of two other origins, in Chromium (make test: what a
# browser does with the headers above does not depend on the database or
# the build, and the headers are checked in every run)
my ($node, $top) = plain_run() ? browser_tools() : ();
if ($node) {
    my $free = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0) or die "socket: $!";
    my $other_port = $free->sockport;
    close $free;
    my $held = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 3000, Listen => 1, ReuseAddr => 1);
    ok($held, 'port 3000 is free for the page of the listed origin http://localhost:3000');
    close $held if $held;
    open my $fh, '-|', $node, "$top/t/js/cors-browser.mjs", $api, $key, 3000, $other_port or die "node: $!";
    my $out = do { local $/; <$fh> };
    close $fh;
    is($? >> 8, 0, 'the browser ran') or diag $out;
    my $r = eval { JSON::PP->new->decode($out) } // {};
    ok($r->{allowed}{search}{ok} && $r->{allowed}{search}{status} == 200, 'listed origin: the page reads a search');
    like($r->{allowed}{search}{etag} // '', qr/^"/, '... and its ETag');
    ok($r->{allowed}{mandate}{ok} && $r->{allowed}{mandate}{status} == 200, '... and, with the key, the mandate (after a preflight)');
    ok($r->{allowed}{quote}{ok} && $r->{allowed}{quote}{status} == 404, '... and POSTs a quote and reads its answer (404: no such sku)');
    ok($r->{other}{search}{ok} && $r->{other}{search}{status} == 200, 'an origin not listed: the page reads a search');
    ok(!$r->{other}{mandate}{ok}, '... but not the mandate: the browser refuses') or diag explain $r->{other};
    ok(!$r->{other}{quote}{ok}, '... nor a quote');
}
done_testing();
