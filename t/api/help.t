# Help pages (docs/api.md, "Help pages"): every `docs` link the API returns
# leads to a real page under /v1/docs. The error codes are found by reading the
# module's C sources, so a new code without a page fails here.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use Apache::Test ();
use Apache::TestRequest ();
use HTTP::Request;
use URI;
use AgentShop::Test;

my $ROOT = 'http://' . Apache::TestRequest::hostport() . "$AgentShop::Test::BASE/";
my $UA = Apache::TestRequest::user_agent(keep_alive => 1, reset => 1);

# GET an absolute URL: the response, and its body as characters.
sub fetch {
    my ($url, $method) = @_;
    my $res = $UA->request(HTTP::Request->new($method // 'GET', $url));
    my $body = $res->content;
    utf8::decode($body);
    return ($res, $body);
}

# A `docs` link is relative to the API base.
sub docs_url { URI->new_abs($_[0], $ROOT)->as_string }

sub links {
    my ($html, $page) = @_;
    return map { URI->new_abs($_, $page)->as_string } $html =~ /<a href="([^"]*)"/g;
}

# A help page: 200, HTML in UTF-8, the strict CSP, no script.
sub is_help_page {
    my ($res, $body, $name) = @_;
    my $csp = $res->header('Content-Security-Policy') // '';
    my $ok = $res->code == 200
      && ($res->header('Content-Type') // '') =~ m{^text/html; charset=utf-8$}i
      && $csp =~ /default-src 'none'/
      && $body =~ /\A<!DOCTYPE html>\n<html lang="en">/
      && $body =~ m{<meta charset="utf-8">}
      && $body =~ m{</html>\n\z}
      && $body !~ /<script/i;
    ok($ok, $name) or diag($res->code . ' ' . ($res->header('Content-Type') // '') . " CSP: $csp\n"
                           . substr($body, 0, 200));
    return $ok;
}

# ---- the index and every page it links to ----
my %pages;    # url => body of every help page seen
for my $index ("${ROOT}docs", "${ROOT}docs/") {
    my ($res, $body) = fetch($index);
    is_help_page($res, $body, "GET $index is the help index");
    like($res->header('Cache-Control') // '', qr/max-age=\d+/, '... which may be cached');
    my @docs = grep { m{^\Q${ROOT}\Edocs(/|$)} } links($body, $index);
    ok(@docs >= 3, '... linking to the help pages') or diag explain \@docs;
    for my $url (@docs) {
        next if $pages{$url};
        my ($r, $b) = fetch($url);
        is_help_page($r, $b, "... $url") and $pages{$url} = $b;
    }
}
ok($pages{"${ROOT}docs/checkout"}, 'the index links to the checkout page');
ok($pages{"${ROOT}docs/errors"}, 'the index links to the errors index');

# Every link on every page leads somewhere that answers (nothing broken).
my %checked;
for my $page (sort keys %pages) {
    for my $url (links($pages{$page}, $page)) {
        next if $checked{$url}++;
        my ($r) = fetch($url);
        is($r->code, 200, "link $url (on $page) answers 200");
    }
}
my ($res, $body) = fetch("${ROOT}docs/checkout", 'HEAD');
is($res->code, 200, 'HEAD docs/checkout');
is($body, '', '... without a body');

# ---- every error code the module can emit has a page ----
my %codes;
my $top = Apache::Test::vars('serverroot') . '/..';
my @sources = (glob("$top/core/*/*.c"), glob("$top/mod_agentshop/*.c"));
ok(@sources >= 10, scalar(@sources) . ' C source files to scan');
for my $file (@sources) {
    open my $fh, '<', $file or die "$file: $!";
    my $src = do { local $/; <$fh> };
    my $code = qr/"([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)"/;
    # as_respond_error(resp, 404, "NOT_FOUND", ...), as_problem_set(p, 400, "X", ...)
    $codes{$1}{$file} = 1 while $src =~ /\b(?:as_respond_error|as_problem_set)\s*\([^;"]*?$code/g;
    $codes{$1}{$file} = 1 while $src =~ /\bas_error_object\s*\(\s*$code/g;
    $codes{$1}{$file} = 1 while $src =~ /"error"\s*,\s*$code/g;    # json_pack(..., "error", "X")
    $codes{$1}{$file} = 1 while $src =~ /\{\s*[1-5]\d\d\s*,\s*$code/g;    # {429, "RATE_LIMITED", ...}
}
my @codes = sort keys %codes;
ok(@codes >= 25, scalar(@codes) . ' error codes found in the sources')
  or diag "@codes";
ok($codes{$_}, "... among them $_")
  for qw(NOT_FOUND VALIDATION_ERROR CONFIRMATION_REQUIRED RATE_LIMITED SERVICE_UNAVAILABLE
         INTERNAL_ERROR IDEMPOTENCY_KEY_REUSED METHOD_NOT_ALLOWED PAYLOAD_TOO_LARGE);
my $errors_index = $pages{"${ROOT}docs/errors"} // '';
for my $code (@codes) {
    my $url = docs_url("docs/errors/$code");
    ($res, $body) = fetch($url);
    is_help_page($res, $body, "$code has a page at docs/errors/$code")
      or diag 'used in ' . join ', ', keys %{ $codes{$code} };
    like($body, qr{<h1>\Q$code\E</h1>}, '... naming the code');
    like($body, qr{HTTP status [1-5]\d\d}, '... its status');
    like($body, qr{Is retrying safe\?</h2>\n<p>\S}, '... and whether a retry is safe');
    like($errors_index, qr{>\Q$code\E<}, '... and the errors index lists it');
}

# ---- links the API hands out resolve ----
my $sku = demo_data('products')->[0]{sku};
my ($r, $v) = api_get("/products/$sku");
my $docs = $v->{agent_checkout}{docs};
ok(defined $docs && $docs !~ m{^(/|[a-z]+:)}, "agent_checkout.docs of $sku is relative ($docs)");
($res, $body) = fetch(docs_url($docs));
is_help_page($res, $body, '... and resolves to a help page');
like($body, qr/Idempotency-Key/, '... on how to buy (Idempotency-Key)');
like($body, qr/create_order/, '... and the MCP tool');

my @errors = (
    [ 'GET', '/products/NOPE', 404, 'NOT_FOUND' ],
    [ 'GET', '/search?limit=0', 400, 'VALIDATION_ERROR' ],
    [ 'POST', '/search', 405, 'METHOD_NOT_ALLOWED' ],
    [ 'GET', '/mandates/current', 403, 'AGENT_UNIDENTIFIED' ],
    [ 'GET', '/confirmations/conf_nosuch?token=' . ('A' x 43), 404, 'CONFIRMATION_INVALID' ],
    [ 'GET', '/docs/nope', 404, 'NOT_FOUND' ],
    [ 'GET', '/docs/errors/NO_SUCH_CODE', 404, 'NOT_FOUND' ],
);
for my $e (@errors) {
    my ($method, $path, $status, $code) = @$e;
    ($r, $v) = api($method, $path);
    is_json_error($r, $v, $status, $code, "$method $path is $status $code");
    my $link = $v->{docs} // '';
    is($link, "docs/errors/$code", "... with docs $link");
    ($res, $body) = fetch(docs_url($link));
    is_help_page($res, $body, '... which resolves to a help page');
    like($body, qr/\Q$code\E/, "... that mentions $code");
}

# A base other than /v1: the same pages, links relative to it.
{
    local $AgentShop::Test::BASE = '/fast/v1';
    ($r, $v) = api_get('/products/NOPE');
    my $url = 'http://' . Apache::TestRequest::hostport() . "/fast/v1/$v->{docs}";
    ($res, $body) = fetch($url);
    is_help_page($res, $body, "under /fast/v1, the docs link resolves there ($url)");
    unlike($body, qr{"/v1}, '... and no link on the page goes to /v1');
}

done_testing();
