# HTTP behaviour under /v1: JSON everywhere, 404 and 405 with Allow, HEAD, and
# no HTML or server error whatever the path or query string.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use Apache::TestRequest ();
use AgentShop::Test;

my ($res, $v) = api_get('');
is($res->code, 200, 'GET /v1 describes the API');
like($res->header('Content-Type'), qr{^application/json}, '... as JSON');

for my $path ('/nope', '/products', '/products/', '/search/x', '/devices/a/b/c/d', '//search') {
    ($res, $v) = api_get($path);
    is_json_error($res, $v, 404, 'NOT_FOUND', "GET /v1$path is 404 JSON");
}
for my $m (qw(POST PUT DELETE)) {
    ($res, $v) = api($m, '/search');
    is_json_error($res, $v, 405, 'METHOD_NOT_ALLOWED', "$m /v1/search is 405");
    is($res->header('Allow'), 'GET, HEAD', '... with Allow');
}
($res) = api('HEAD', '/search?q=filter');
is($res->code, 200, 'HEAD works');
is($res->content, '', '... without a body');
($res, $v) = api_get('/.error');
is_json_error($res, $v, 404, 'NOT_FOUND', 'the internal error path is not a resource');

# Hostile paths and query strings: always JSON, never HTML, never 5xx.
my @paths = ('/products/%2F', '/products/a%00b', '/products/%FF%FE', '/products/..%2F..%2Fetc',
             '/products/%', '/products/a%2', '/search?%', '/search?=x', '/search?&&&',
             '/search?q=%E2%82', '/search?weights=%7B%7D', '/search?weights=%5B1%5D',
             '/search?weights=null', '/search?max_price=99999999999999999999',
             '/search?limit=99999999999999999999999', '/devices?q=%F0%9F%98%80',
             '/search?q=' . ('%41' x 2500));  # within LimitRequestLine (8190)
srand(20261120);
for (1 .. 60) {
    my $q = join '', map { chr(32 + int rand 95) } 1 .. 1 + int rand 40;
    $q =~ s/([^A-Za-z0-9&=])/sprintf '%%%02X', ord $1/ge if rand() < 0.7;
    push @paths, '/search?' . $q, '/products/SKU' . int(rand 999) . "?$q";
}
my @bad;
for my $p (@paths) {
    ($res, $v) = api_get($p);
    push @bad, "$p -> " . $res->code
      if $res->code >= 500 || ($res->header('Content-Type') // '') !~ m{^application/json}
      || ref $v ne 'HASH' || ($res->code >= 400 && !defined $v->{error});
}
is_deeply(\@bad, [], 'no hostile path or query string gets HTML, a server error or a non-error body');
($res, $v) = api_get('/products/a%2');
is_json_error($res, $v, 400, 'VALIDATION_ERROR', 'a bad escape in the path: 400');
is($v && $v->{field}, 'path', '... naming the path');
($res, $v) = api_get('/search?=x');
is_json_error($res, $v, 400, 'VALIDATION_ERROR', 'a query parameter without a name: 400');
is($v && $v->{field}, 'query', '... naming the query');

# Requests httpd refuses while reading them, before any URL mapping: still JSON.
use IO::Socket::INET;
sub raw {
    my ($request) = @_;
    my $sock = IO::Socket::INET->new(PeerAddr => Apache::TestRequest::hostport(), Timeout => 10)
      or die "connect: $!";
    print $sock $request;
    local $/;
    my $reply = <$sock> // '';
    close $sock;
    my ($status) = $reply =~ m{^HTTP/1\.\d (\d+)};
    my ($ctype) = $reply =~ m{^Content-Type: ([^\r\n]+)}mi;
    my ($body) = $reply =~ m{\r\n\r\n(.*)\z}s;
    return ($status // 0, $ctype // '', $body // '');
}
my ($st, $ct, $body) = raw('GET /v1/search?q=' . ('a' x 9000) . " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
is($st, 414, 'a request line over LimitRequestLine: 414');
like($ct, qr{^application/json}, '... as JSON');
like($body, qr/"error":"URI_TOO_LONG"/, '... with the error object');
($st, $ct, $body) = raw("GET /v1/search HTTP/1.1\r\nHost: x\r\nX-Huge: " . ('b' x 9000) . "\r\nConnection: close\r\n\r\n");
is($st, 400, 'a header over LimitRequestFieldSize: 400');
like($ct, qr{^application/json}, '... as JSON');
like($body, qr/"error":"VALIDATION_ERROR"/, '... with the error object');
like($body, qr/"field":"headers"/, '... naming the headers');
($st, $ct) = raw('GET /not-the-api/' . ('a' x 9000) . " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
unlike($ct, qr{json}, 'other paths keep httpd\'s own page');

# ---- bodies are JSON: another Content-Type is 415 (issue 17) ----
{
    my ($user, $key) = new_agent();
    new_mandate($user);
    my $body = '{"sku":"HS-0001","quantity":1}';
    my @h = ('Authorization' => "Bearer $key", 'Service-Agent' => 'test-agent/1.0');
    for my $ct ('text/plain', 'application/x-www-form-urlencoded', 'application/jsonx', 'multipart/form-data') {
        ($res, $v) = api('POST', '/quotes', [ @h, 'Content-Type' => $ct ], $body);
        is_json_error($res, $v, 415, 'UNSUPPORTED_MEDIA_TYPE', "a JSON body sent as $ct is 415")
          and is($v->{field}, 'Content-Type', '... naming Content-Type');
    }
    ($res, $v) = api('POST', '/quotes', [ @h, 'Content-Type' => 'application/json; charset=utf-8' ], $body);
    is($res->code, 201, 'application/json; charset=utf-8 is taken') or diag $res->content;
    ($res, $v) = api('POST', '/quotes', \@h, $body);
    is($res->code, 201, 'a body without a Content-Type is read as JSON') or diag $res->content;
    ($res, $v) = api('POST', '/compatibility/check', [ @h, 'Content-Type' => 'text/plain' ],
                     '{"sku":"HS-0001","device":"dyson-v11-absolute"}');
    is_json_error($res, $v, 415, 'UNSUPPORTED_MEDIA_TYPE', '... on every JSON endpoint (compatibility/check)');
}

done_testing();
