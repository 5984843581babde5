# A fresh install before its catalogue is loaded (issue 16, point 5): every
# endpoint answers as usual on a database with the schema and no products:
# empty results, 404 for what does not exist, JSON errors. A search with q
# built the text index of no products and killed the child. Served by the
# virtual host of t/conf/vhost-empty.conf.in; at the end the catalogue is
# loaded and the same search finds it.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use JSON::PP;
use Apache::Test ();
use Apache::TestRequest ();
use AgentShop::Test;

Apache::TestRequest::module('empty');
$AgentShop::Test::HOSTPORT = Apache::TestRequest::hostport();
Apache::TestRequest::module('default');
$AgentShop::Test::DB = 'empty';

my $JSON = JSON::PP->new->utf8->canonical;

sub is_json {
    my ($res, $status, $name) = @_;
    ok($res->code == $status && ($res->header('Content-Type') // '') =~ m{^application/json},
       "$name: $status, JSON")
      or diag($res->code . ' ' . ($res->header('Content-Type') // '') . ' '
              . substr($res->content, 0, 300));
}

# An answer of nothing: 200, JSON, count 0 and nothing in results or excluded.
sub found_nothing {
    my ($query, $v, $res) = @_;
    is_json($res, 200, "search?$query");
    ok(ref $v eq 'HASH' && $v->{count} == 0 && ref $v->{results} eq 'ARRAY' && !@{ $v->{results} }
       && ref $v->{excluded} eq 'ARRAY' && !@{ $v->{excluded} } && $v->{excluded_count} == 0,
       "search?$query: count 0, no results, nothing excluded")
      or diag(substr($res->content, 0, 300));
}

# ---- text searches: the index of no products ----
my @with_q = (
    'q=soap', 'q=hand+soap', 'q=soap&category=hand-soap', 'q=soap&part_type=hand-soap',
    'q=soap&max_price=10', 'q=soap&deliver_by=' . today_plus(5), 'q=soap&weights=price:1,delivery:1',
    'q=soap&verified_only=false', 'q=soap&limit=5&offset=10',
    map({ "q=soap&sort=$_" } qw(score price delivery return_rate)),
);
for my $query (@with_q, 'q=soap') {    # the last one again: the snapshot kept
    my ($res, $v) = api_get("/search?$query");
    found_nothing($query, $v, $res);
}
# and without q
for my $query ('', 'category=hand-soap', 'part_type=filter', 'max_price=10', 'sort=price',
               'weights=price:1', 'verified_only=false') {
    my ($res, $v) = api_get("/search?$query");
    found_nothing($query, $v, $res);
}
# filters naming what an empty catalogue does not have: the usual 400s
for my $query ('q=soap&device=dyson-v11', 'device=dyson-v11', 'q=soap&merchant=m-1') {
    my ($res, $v) = api_get("/search?$query");
    my ($field) = $query =~ /(device|merchant)=/;
    is_json_error($res, $v, 400, 'VALIDATION_ERROR', "search?$query: 400 VALIDATION_ERROR");
    is($v->{field}, $field, "... about $field");
    like($v->{message}, qr/no merchant is known before a catalogue is loaded/,
         '... saying no merchant is known yet') if $field eq 'merchant';
}

# ---- the other read endpoints ----
my ($res, $v) = api_get('/products/XX-0001');
is_json_error($res, $v, 404, 'NOT_FOUND', 'a product: 404 NOT_FOUND');
($res, $v) = api_get('/devices?q=dyson');
is_json($res, 200, 'devices?q=dyson');
ok(ref $v->{candidates} eq 'ARRAY' && !@{ $v->{candidates} } && $v->{count} == 0,
   '... no candidates, count 0');
($res, $v) = api_get('/devices/x/compatible');
is_json_error($res, $v, 404, 'NOT_FOUND', "a device's compatible parts: 404 NOT_FOUND");
($res, $v) = api_get('/openapi.json');
is_json($res, 200, 'openapi.json');
is($v->{openapi}, '3.1.0', '... the document');
($res) = api_get('/docs');
is($res->code, 200, 'docs: 200');
like($res->header('Content-Type'), qr{^text/html}, '... a page');

# ---- MCP ----
my $MCP = [ 'Content-Type' => 'application/json', 'Accept' => 'application/json, text/event-stream' ];
sub rpc {
    my ($id, $method, $params) = @_;
    my ($r, $d) = api('POST', '/mcp', $MCP,
                      $JSON->encode({ jsonrpc => '2.0', id => $id, method => $method,
                                      defined $params ? (params => $params) : () }));
    is_json($r, 200, "mcp $method");
    return ref $d eq 'HASH' ? $d->{result} : undef;
}
my $r = rpc(1, 'tools/list');
ok($r && grep({ $_->{name} eq 'search_products' } @{ $r->{tools} }), '... lists search_products');
for my $args ({ q => 'soap' }, {}) {
    my $name = 'search_products ' . $JSON->encode($args);
    $r = rpc(2, 'tools/call', { name => 'search_products', arguments => $args });
    my $sc = $r ? $r->{structuredContent} : undef;
    ok($r && !$r->{isError} && $sc && $sc->{count} == 0 && !@{ $sc->{results} },
       "$name: not an error, count 0, no results")
      or diag($JSON->encode($r // {}));
}

# ---- an agent with a key and a mandate ----
my ($user, $key) = new_agent();
new_mandate($user, categories => 'hand-soap', per_order => 100, monthly => 500, confirm_above => 50);
my $H = agent_headers($key);
($res, $v) = post_json('/quotes', $H, { sku => 'XX-0001', quantity => 1 });
is_json_error($res, $v, 404, 'NOT_FOUND', 'a quote: 404 NOT_FOUND');
is($v->{field}, 'sku', '... about sku');
($res, $v) = post_json('/compatibility/check', $H, { sku => 'XX-0001', device => 'x' });
is_json_error($res, $v, 404, 'NOT_FOUND', 'a fit check: 404 NOT_FOUND');
($res, $v) = post_json('/questions', $H, { sku => 'XX-0001', question => 'How much soap is in it?' });
is_json_error($res, $v, 404, 'NOT_FOUND', 'a question: 404 NOT_FOUND');
($res, $v) = api_get('/mandates/current', $H);
is_json($res, 200, 'mandates/current');
is_deeply($v->{allowed_categories}, ['hand-soap'], '... the mandate just made');
($res, $v) = api_get('/orders/nope', $H);
is_json_error($res, $v, 404, 'NOT_FOUND', 'an order: 404 NOT_FOUND');

# ---- the catalogue loaded: the index of no products is replaced ----
# in the background (docs/search.md): until the new index is installed the
# searches answer from the old one, of no products; then from the new one.
ctl('--data', Apache::Test::vars('serverroot') . '/../sql/demo', 'init', '--demo');
my $demo = do { local $AgentShop::Test::HOSTPORT; (api_get('/search?q=soap'))[1] };
my (@codes, @counts);
for (1 .. 200) {
    ($res, $v) = api_get('/search?q=soap');
    push @codes, $res->code;
    push @counts, ref $v eq 'HASH' ? $v->{count} : -1;
    last if $res->code != 200 || $counts[-1] != 0;
    select(undef, undef, undef, 0.05);
}
is(scalar(grep { $_ != 200 } @codes), 0, 'search?q=soap once the catalogue is loaded: every answer 200')
  or diag("@codes");
is(scalar(grep { $_ != 0 && $_ != $demo->{count} } @counts), 0,
   '... each of the old catalogue (0) or the new') or diag("@counts");
cmp_ok($counts[-1], '>', 0, '... and then it finds it');
is($counts[-1], $demo->{count}, '... as much as the demo database finds');

done_testing();
