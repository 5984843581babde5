# GET /v1/openapi.json: the OpenAPI 3.1 description the module serves. It must
# describe this server, list every endpoint of the index under the same path
# template with its methods, and pass two real linters (Redocly CLI and
# Spectral, t/js). Every response of the whole suite is checked against it
# afterwards by t/js/validate-responses.mjs (see scripts/apache-test.sh); this
# script saves the served copy it uses.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use Apache::Test ();
use Apache::TestRequest ();
use JSON::PP;
use AgentShop::Test;

my ($res, $doc) = api_get('/openapi.json');
is($res->code, 200, 'GET /v1/openapi.json: 200');
like($res->header('Content-Type') // '', qr{^application/json}, '... as JSON');
is(ref $doc, 'HASH', '... that parses') or BAIL_OUT('no document: ' . substr($res->content, 0, 300));
like($doc->{openapi}, qr/^3\.1\.\d+$/, '... OpenAPI 3.1');
my $base = 'http://' . Apache::TestRequest::hostport() . '/v1';
is($doc->{servers}[0]{url}, $base, '... its server is the base this request reached');
unlike($res->content, qr/\@BASE_URL\@/, '... with no marker left');
is($doc->{info}{contact}{url}, "$base/docs", "its contact is this server's help pages");
{
    my ($r) = api_get('/docs');
    is($r->code, 200, '... which answer');
}

# The same document under another location names that location.
{
    local $AgentShop::Test::BASE = '/fast/v1';
    my ($r2, $d2) = api_get('/openapi.json');
    is($d2 && $d2->{servers}[0]{url}, 'http://' . Apache::TestRequest::hostport() . '/fast/v1',
       'under /fast/v1 the server URL is /fast/v1');
    is($d2 && $d2->{info}{contact}{url}, 'http://' . Apache::TestRequest::hostport() . '/fast/v1/docs',
       '... and the contact its help pages');
}

($res) = api('HEAD', '/openapi.json');
is($res->code, 200, 'HEAD /v1/openapi.json: 200');
is($res->content, '', '... without a body');

($res, my $v) = api_get('/openapi.json?format=yaml');
is_json_error($res, $v, 400, 'VALIDATION_ERROR', 'a query parameter is refused');
is($v && $v->{field}, 'format', '... naming it');

# Every endpoint of the index is a path of the document, written the same
# (its parameters named as there: /products/{sku}, not /products/{id}), with
# the same methods (HEAD goes with GET); and the document has no other path
# but the index itself.
my (undef, $index) = api_get('');
my @eps = @{ $index->{endpoints} // [] };
ok(@eps > 15, 'the index lists the endpoints');
my %ops;
for my $path (keys %{ $doc->{paths} }) {
    $ops{$path} = join ', ', sort map { uc } grep { /^(get|put|post|delete|patch)$/ } keys %{ $doc->{paths}{$path} };
}
my %listed;
for my $ep (@eps) {
    my $methods = join ', ', sort grep { $_ ne 'HEAD' } split /,\s*/, $ep->{methods};
    ok(exists $ops{ $ep->{path} }, "$ep->{path}: a path of the document, spelt the same")
      or diag('the document has: ' . join ' ', sort keys %ops);
    is($ops{ $ep->{path} }, $methods, "$ep->{path}: documented with $methods");
    ok(!$listed{ $ep->{path} }++, "$ep->{path}: listed once");
}
is_deeply([ sort grep { $_ ne '/' } keys %ops ], [ sort keys %listed ],
          'the document has no path the index leaves out but the index itself');
ok($doc->{paths}{'/'}{get}, 'the index is documented');
ok((grep { $_->{path} eq '/products/{sku}' } @eps) && (grep { $_->{path} eq '/devices/{slug}/compatible' } @eps),
   'the index names the sku and slug parameters as the document does');

# The operationIds an agent uses are the MCP tool names.
my %ids = map { my $p = $_; map { (ref $p->{$_} eq 'HASH' ? $p->{$_}{operationId} // '' : '') => 1 } keys %$p }
  values %{ $doc->{paths} };
for my $tool (qw(search_products get_product find_devices compatible_parts check_compatibility
                 ask_question get_mandate create_quote create_order get_order cancel_order start_return)) {
    ok($ids{$tool}, "operationId $tool");
}

# The help pages the API links to: each answer is checked against the
# document with the rest of the suite's responses.
my (undef, $err) = api_get('/nope');
ok($err && defined $err->{docs}, 'errors carry a docs link');
my (undef, $product) = api_get('/search?limit=1');
my $sku = $product->{results}[0]{sku};
my (undef, $view) = api_get("/products/$sku");
for my $link ('docs', $err->{docs} // 'docs/errors/NOT_FOUND', $view->{agent_checkout}{docs}) {
    ($res) = api_get("/$link");
    ok($res->code == 200 || $res->code == 404, "GET /v1/$link answers")
      or diag($res->code . ' ' . substr($res->content, 0, 200));
}
($res) = api_get('/docs/errors/NOT_FOUND');
ok($res->code == 200 || $res->code == 404, 'GET /v1/docs/errors/NOT_FOUND answers');

# The served copy, saved for the linter and for the response check.
my $top = Apache::Test::vars('serverroot') . '/..';
my $saved = Apache::Test::vars('serverroot') . '/var/openapi.json';
(my $raw) = api_get('/openapi.json');
open my $fh, '>', $saved or die "$saved: $!";
print $fh $raw->content;
close $fh;

# The linters read the compiled-in document, the same bytes whatever the
# database or the build: they run in make test only (AgentShop::Test
# plain_run), not again on PostgreSQL or under the sanitizers.
SKIP: {
skip('the document is linted in make test (plain_run)', 8) unless plain_run();
my $redocly = "$top/t/js/node_modules/.bin/redocly";
{
    ok(-x $redocly, 'Redocly CLI is installed (scripts/deps.sh test)');
    local $ENV{REDOCLY_TELEMETRY} = 'off';
    local $ENV{REDOCLY_SUPPRESS_UPDATE_NOTICE} = 'true';
    local $ENV{NO_COLOR} = '1';
    my $out = `'$redocly' lint --config '$top/t/js/redocly.yaml' '$saved' 2>&1`;
    my $rc = $? >> 8;
    is($rc, 0, 'redocly lint: exit 0') or diag($out);
    unlike($out, qr/\berrors?\b.*generated|You have \d+ errors?/i, '... no errors') or diag($out);
    unlike($out, qr/You have \d+ warnings?/i, '... no warnings') or diag($out);
}

# A second linter that reads the document its own way (Spectral, the
# spectral:oas rules, t/js/spectral.yaml): no result of any severity, hints
# included. Its JSON report is [] when nothing is found.
my $spectral = "$top/t/js/node_modules/.bin/spectral";
{
    ok(-x $spectral, 'Spectral CLI is installed (scripts/deps.sh test)');
    local $ENV{NO_COLOR} = '1';
    my $out = `'$spectral' lint --ruleset '$top/t/js/spectral.yaml' --format json --fail-severity hint --quiet '$saved' 2>&1`;
    my $rc = $? >> 8;
    is($rc, 0, 'spectral lint: exit 0') or diag($out);
    my $found = eval { JSON::PP->new->decode($out) };
    is(ref $found, 'ARRAY', '... with a JSON report') or diag($out);
    my @found = ref $found eq 'ARRAY' ? @$found : ();
    is(scalar @found, 0, '... of no error, warning, info or hint')
      or diag(join "\n", map { "$_->{code}: $_->{message} at " . join('.', @{ $_->{path} // [] }) } @found);
}

}

done_testing();
