# The search index in httpds of the test's own (AgentShop::OwnHttpd), for
# what Apache::Test's server cannot show (docs/search.md, the index's life):
#  - under the prefork MPM, where each child is one process with one request
#    thread and the background build thread beside it: searches from many
#    clients at once, one index file built and the others mapped, and orders
#    placed concurrently across the children;
#  - a first build that takes longer than httpd's Timeout: the search waits
#    Timeout, then answers 503 SERVICE_UNAVAILABLE with Retry-After (a
#    product view meanwhile is read whole and answers), and searches answer
#    once the build is done. The build is held back by holding the index
#    directory's lock for that database, as another child building would;
#  - an index directory that cannot be used: each child builds its own index
#    in memory, and answers as the shared file would.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use File::Temp qw(tempdir);
use Fcntl qw(:flock);
use Digest::SHA qw(sha256_hex);
use JSON::PP;
use LWP::UserAgent;
use Time::HiRes qw(sleep time);
use AgentShop::Test;
use AgentShop::OwnHttpd;
use Apache::Test ();

plan skip_all => 'the httpds of this test use SQLite (the suite runs on PostgreSQL)' if is_pg();
plan skip_all => 'runs as a user other than root (scripts/apache-test.sh)' if $> == 0;

my $top = Apache::Test::vars('serverroot') . '/..';
my $ctl = "$top/bin/agentshopctl";
my $dir = tempdir(CLEANUP => 1);
my $J   = JSON::PP->new;

sub sh { my $rc = system(@_); die "@_ failed" if $rc; }

# One demo database, copied before anything is bought, so that the httpds on
# the copies hold the same catalogue and stock.
sh("$ctl --params '$dir/shop.db' --data '$top/sql/demo' init --demo >/dev/null");
sh('sqlite3', "$dir/shop.db", ".backup '$dir/wait.db'");
sh('sqlite3', "$dir/shop.db", ".backup '$dir/memory.db'");

sub get {
    my ($port, $path, @h) = @_;
    my $ua = LWP::UserAgent->new(timeout => 30, keep_alive => 0);
    return $ua->get("http://127.0.0.1:$port/v1$path", @h);
}

sub count_of { my ($re, $log) = @_; my @m = $log =~ /$re/g; return scalar @m }

# ---- prefork ----
my $prefork = <<"CONF";
LogLevel warn agentshop:info
StartServers 3
MinSpareServers 3
MaxSpareServers 6
MaxRequestWorkers 6
AgentShopSearchIndexDir "$dir/prefork-index"
CONF
my ($rc, $log, $pid, $port) = start_httpd(dir => $dir, name => 'prefork', db => "$dir/shop.db",
                                          top => $top, mpm => 'prefork', extra => $prefork);
ok(!defined $rc, 'httpd starts with the prefork MPM') or diag $log;
if (!defined $rc) {
    # (concurrently: each in a process of its own, all at once)
    my @r = concurrently(map { sub { my $res = get($port, '/search?q=hand+soap&limit=5');
                                     ($res, $res->decoded_content) } } 1 .. 18);
    is(scalar(grep { $_->{code} == 200 } @r), 18, 'prefork: 18 searches at once, each answered 200')
      or diag join "\n", map { "$_->{code} " . substr($_->{body} // '', 0, 200) } @r;
    is(scalar(keys %{ { map { ($_->{body} // '') => 1 } @r } }), 1, '... with the same page from every child');
    my $first = eval { decode_json($r[0]{body}) } // {};
    cmp_ok($first->{count} // 0, '>', 0, '... which has results');

    # Orders from several children at once, against one offer's stock.
    my $key = `$ctl --params '$dir/shop.db' key create --user prefork-user` =~ /"key": "([^"]+)"/
      ? $1 : die 'no key';
    sh("$ctl --params '$dir/shop.db' mandate create --user prefork-user --categories hand-soap "
       . "--per-order-eur 100 --monthly-eur 1000 --confirm-above-eur 100 >/dev/null");
    my ($sku, $offer, $stock);
    for my $p (@{ $first->{results} // [] }) {
        my $v = eval { decode_json(get($port, "/products/$p->{sku}")->decoded_content) } // next;
        my ($o) = grep { $_->{stock} >= 6 } @{ $v->{offers}{ranked} // [] };
        ($sku, $offer, $stock) = ($p->{sku}, $o->{offer_id}, $o->{stock}) and last if $o;
    }
    ok($offer, "prefork: an offer with 6 units to buy ($sku)");
    my @h = ('Authorization' => "Bearer $key", 'Service-Agent' => 'index-httpd-test/1',
             'Content-Type' => 'application/json');
    my @orders = concurrently(map {
        my $i = $_;
        sub {
            my $ua = LWP::UserAgent->new(timeout => 30, keep_alive => 0);
            my $q = $ua->post("http://127.0.0.1:$port/v1/quotes", @h,
                              Content => $J->encode({ sku => $sku, offer_id => $offer }));
            return ($q, $q->decoded_content) unless $q->code == 201;
            my $o = $ua->post("http://127.0.0.1:$port/v1/orders", @h, 'Idempotency-Key' => "prefork-$$-$i",
                              Content => $J->encode({ quote_id => decode_json($q->decoded_content)->{id},
                                                      reason => 'Concurrent orders under the prefork MPM.' }));
            return ($o, $o->decoded_content);
        }
    } 1 .. 6) if $offer;
    is(scalar(grep { $_->{code} == 201 } @orders), 6, 'prefork: 6 orders at once from several children, each placed')
      or diag join "\n", map { "$_->{code} " . substr($_->{body} // '', 0, 200) } @orders;
    my $after = $offer ? eval { decode_json(get($port, "/products/$sku")->decoded_content) } : undef;
    my ($left) = map { $_->{stock} } grep { $_->{offer_id} eq ($offer // '') } @{ $after->{offers}{ranked} // [] };
    is($left, defined $stock ? $stock - 6 : undef, '... and the offer has 6 units fewer');
    stop_httpd($pid);
    $log = httpd_log("$dir/prefork");
    is(count_of(qr/search index \d+ products, \d+ bytes, built in \d+ ms/, $log), 1,
       'prefork: the index was built once') or diag $log;
    unlike($log, qr/\[(?:\S*:)?(?:error|crit|alert|emerg)\]|Segmentation|exit signal/,
           '... and the log has no error and no crash') or diag $log;
}

# ---- a first build that outlasts Timeout ----
my $wait_dir = "$dir/wait-index";
($rc, $log, $pid, $port) = start_httpd(dir => $dir, name => 'wait', db => "$dir/wait.db", top => $top,
                                       extra => "LogLevel warn agentshop:info\nTimeout 1\n"
                                              . "AgentShopSearchIndexDir \"$wait_dir\"");
ok(!defined $rc, 'httpd starts with Timeout 1') or diag $log;
my $wait_body;
if (!defined $rc) {
    # the lock a child building that database's index holds
    my $lock = "$wait_dir/" . substr(sha256_hex("sqlite3 $dir/wait.db"), 0, 16) . '.lock';
    open my $lf, '>>', $lock or die "$lock: $!";
    flock($lf, LOCK_EX) or die "flock: $!";
    my $t0 = time;
    my $res = get($port, '/search?q=hand+soap&limit=5');
    my $took = time - $t0;
    my $err = eval { decode_json($res->decoded_content) } // {};
    is($res->code, 503, 'a search while the first build cannot finish answers 503')
      or diag $res->as_string;
    is($err->{error}, 'SERVICE_UNAVAILABLE', '... SERVICE_UNAVAILABLE, as JSON') or diag $res->decoded_content;
    like($res->header('Retry-After') // '', qr/^[1-9]\d*$/, '... with Retry-After');
    ok($took >= 0.9 && $took < 10, sprintf('... after waiting about Timeout (1 s): %.2f s', $took));
    my $view = get($port, '/products/HS-0001');
    is($view->code, 200, 'a product view meanwhile is answered (read whole from the database)');
    close $lf;    # the build may go on
    my $t1 = time;
    do { sleep 0.2; $res = get($port, '/search?q=hand+soap&limit=5') }
      while ($res->code != 200 && time - $t1 < 30);
    is($res->code, 200, sprintf('once the lock is let go, the search answers 200 (after %.1f s)', time - $t1));
    $wait_body = $res->decoded_content;
    stop_httpd($pid);
    $log = httpd_log("$dir/wait");
    is(count_of(qr/search index \d+ products, \d+ bytes, built in \d+ ms/, $log), 1, '... the index built once')
      or diag $log;
}

# ---- no usable index directory ----
open my $plain, '>', "$dir/not-a-directory" or die $!;
close $plain;
($rc, $log, $pid, $port) = start_httpd(dir => $dir, name => 'memory', db => "$dir/memory.db", top => $top,
                                       extra => "LogLevel warn agentshop:info\n"
                                              . "AgentShopSearchIndexDir \"$dir/not-a-directory/index\"");
ok(!defined $rc, 'httpd starts with an index directory it cannot make') or diag $log;
if (!defined $rc) {
    like($log, qr/the search index directory \Q$dir\/not-a-directory\/index\E cannot be made.*builds its own search index in memory/,
         '... and warns that each child builds its index in memory');
    my $res = get($port, '/search?q=hand+soap&limit=5');
    is($res->code, 200, 'a search is answered from an index in memory') or diag $res->as_string;
    is($res->decoded_content, $wait_body, '... with the page an index file gave on the same catalogue')
      if defined $wait_body;
    stop_httpd($pid);
    $log = httpd_log("$dir/memory");
    cmp_ok(count_of(qr/search index \d+ products, \d+ bytes, built in \d+ ms \(in memory\)/, $log), '>=', 1,
           '... built in memory, as the log says') or diag $log;
    unlike($log, qr/\[(?:\S*:)?(?:error|crit|alert|emerg)\]|Segmentation|exit signal/, '... with no error')
      or diag $log;
}

done_testing();
