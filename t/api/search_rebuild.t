# A new catalogue is indexed in the background (issue 16; docs/search.md, "The
# index"): while a child builds it, its searches go on answering from the
# catalogue it has, and the next search after the new index is installed
# answers from the new one. Served by the virtual host of
# t/conf/vhost-rebuild.conf.in, on a database that starts without a
# catalogue: the first search waits for the first index (of no products);
# then agentshopctl catalogue generate loads 5,000 products behind the
# server's back while one client searches on one connection (one child).
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use HTTP::Tiny;
use JSON::PP qw(decode_json);
use Apache::Test ();
use Apache::TestRequest ();
use AgentShop::Test;

Apache::TestRequest::module('rebuild');
$AgentShop::Test::HOSTPORT = Apache::TestRequest::hostport();
Apache::TestRequest::module('default');
$AgentShop::Test::DB = 'rebuild';

my $PRODUCTS = 5000;
my $PATH = '/search?verified_only=false&limit=1';
my $logs = Apache::Test::vars('t_logs');

# Where the error log ends now: the lines of this test come after it.
sub log_size { -s "$logs/error_log" // 0 }

sub log_since {
    my ($from) = @_;
    open my $fh, '<', "$logs/error_log" or die "error_log: $!";
    seek $fh, $from, 0;
    my @lines = <$fh>;
    close $fh;
    return @lines;
}

# ---- the first search of a process with no index waits for its first build ----
my $mark = log_size();
my ($res, $v) = api_get($PATH);
is($res->code, 200, 'the first search, before any index: 200 once the first index is built')
  or diag($res->code . ' ' . $res->content);
is($v->{count}, 0, '... of the catalogue there is: no products');

# ---- a new catalogue loaded while the child serves ----
my $t = ctl('catalogue', 'generate', '--products', $PRODUCTS, '--seed', 5);
is($t->{products}, $PRODUCTS, "agentshopctl catalogue generate: $PRODUCTS products loaded");

# The same connection, so the same child, which has the index of no products:
# its first search after the load asks for the new index and does not wait
# for it. Then until the new index is in (at most 600 searches, 50 ms apart).
my (@codes, @counts);
for (1 .. 600) {
    ($res, $v) = api_get($PATH);
    push @codes, $res->code;
    push @counts, ref $v eq 'HASH' ? $v->{count} // -1 : -1;
    last if $res->code != 200 || $counts[-1] != 0;
    select(undef, undef, undef, 0.05);
}
is(scalar(grep { $_ != 200 } @codes), 0, scalar(@codes) . ' searches during the build: every one 200')
  or diag("@codes");
is($counts[0], 0, '... the first one after the load from the old catalogue (no products)');
is(scalar(grep { $_ != 0 && $_ != $PRODUCTS } @counts), 0, '... each from the old catalogue or the new')
  or diag("@counts");
is($counts[-1], $PRODUCTS, "... and then from the new one: $PRODUCTS products");
($res, $v) = api_get('/search?q=filter&limit=5');
is($res->code, 200, 'a search with q on the new index: 200');
cmp_ok($v->{count} // 0, '>', 0, '... finds products of the new catalogue');

# ---- the error log: built in the background, not in a request ----
my @lines = log_since($mark);
my @built = grep { /agentshop: search index $PRODUCTS products, \d+ bytes, (built in \d+ ms|mapped) \(.+\) in the background/ } @lines;
ok(@built, "the index of $PRODUCTS products was built (or mapped) in the background")
  or diag(join '', grep { /agentshop:/ } @lines);
# a background build logs without a request: no client address on its line
ok(!grep({ /\[client / } @built), '... on lines of no request (no client)')
  or diag(join '', @built);
ok(!grep({ /search index.*failed/ } @lines), 'no build failed') or diag(join '', @lines);

# ---- a graceful restart while a build may run: the children go, none crashes ----
# Another catalogue version (agentshopctl init rebuilds the rank table when a
# row is missing, and that moves the catalogue), one search to start its build,
# and at once httpd -k graceful: the old children stop the build (or finish
# it) and exit; the new ones build again.
$mark = log_size();
sql_write('DELETE FROM product_rank WHERE product_id = (SELECT MIN(id) FROM products)');
ctl('init');
($res) = api_get($PATH);
is($res->code, 200, 'a search on the next catalogue version: 200 (from the one before)');
my $httpd = Apache::Test::vars('httpd');
my $conf = Apache::Test::vars('t_conf') . '/httpd.conf';
system($httpd, '-f', $conf, '-k', 'graceful') == 0 or BAIL_OUT('httpd -k graceful failed');
# a new connection per search: the one kept alive went with its child
my $http = HTTP::Tiny->new(keep_alive => 0, timeout => 90);
my $url = "http://$AgentShop::Test::HOSTPORT/v1$PATH";
@codes = ();
my $count = -1;
for (1 .. 600) {
    my $r = $http->get($url);
    push @codes, $r->{status};
    $count = $r->{status} == 200 ? eval { decode_json($r->{content})->{count} } // -1 : -1;
    last if $count == $PRODUCTS;
    select(undef, undef, undef, 0.05);
}
is($count, $PRODUCTS, 'after a graceful restart, the search answers from the catalogue');
is(scalar(grep { $_ != 200 && $_ != 503 } @codes), 0, '... every answer 200 (or 503 with Retry-After)')
  or diag("@codes");
@lines = log_since($mark);
ok(!grep({ /exit signal|AH00052|Segmentation|Aborted/ } @lines), 'no child crashed')
  or diag(join '', grep { /exit signal|AH00052/ } @lines);

done_testing();
