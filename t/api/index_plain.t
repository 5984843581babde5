# The search index shared under the plain configuration (docs/deploy.md, "The
# search index"): every AgentShop directive at the server's and the virtual
# host's level, and in <Location /v1> only `SetHandler agentshop`. The index
# directory is made all the same (the default, agentshop-index in
# DefaultRuntimeDir), each database's index is one file there, and the
# children map it: none keeps a copy of its own. httpds of the test's own
# (AgentShop::OwnHttpd): Apache::Test's server has AgentShop directives in its
# <Location> sections. The start-up checks hold there too (the signing key).
# And a child that cannot use the directory says why, in the error log, once.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use File::Temp qw(tempdir);
use Digest::SHA qw(sha256_hex);
use LWP::UserAgent;
use AgentShop::Test;
use AgentShop::OwnHttpd;
use Apache::Test ();

plan skip_all => 'the httpds of this test use SQLite (the suite runs on PostgreSQL)' if is_pg();
plan skip_all => 'runs as a user other than root (scripts/apache-test.sh)' if $> == 0;

my $top = Apache::Test::vars('serverroot') . '/..';
my $ctl = "$top/bin/agentshopctl";
my $dir = tempdir(CLEANUP => 1);

sub sh { my $rc = system(@_); die "@_ failed" if $rc; }

sh("$ctl --params '$dir/shop.db' --data '$top/sql/demo' init --demo >/dev/null");
for my $copy (qw(host.db private.db denied.db)) {
    sh('sqlite3', "$dir/shop.db", ".backup '$dir/$copy'");
}

# Searches from several clients at once, so that several children answer.
sub search_all {
    my ($port, $n) = @_;
    return concurrently(map { sub {
        my $ua = LWP::UserAgent->new(timeout => 60, keep_alive => 0);
        my $res = $ua->get("http://127.0.0.1:$port/v1/search?q=hand+soap&limit=5");
        ($res, $res->decoded_content) } } 1 .. $n);
}

# The httpd's children: the processes whose parent it is.
sub children {
    my ($parent) = @_;
    my @kids;
    opendir(my $d, '/proc') or die "/proc: $!";
    for my $p (grep { /^\d+$/ } readdir $d) {
        open my $st, '<', "/proc/$p/stat" or next;
        my $line = <$st> // '';
        push @kids, $p if $line =~ /^\d+ \(.*\) \S (\d+) / && $1 == $parent;
    }
    closedir $d;
    return @kids;
}

sub maps_of {
    my ($pid, $file) = @_;
    open my $m, '<', "/proc/$pid/maps" or return 0;
    return scalar grep { /\Q$file\E$/ } <$m>;
}

sub index_file {
    my ($idx, $db) = @_;
    my $hash = substr(sha256_hex("sqlite3 $db"), 0, 16);
    opendir(my $d, $idx) or return;
    my ($f) = grep { /^\Q$hash\E-\d+\.idx$/ } readdir $d;
    closedir $d;
    return $f ? "$idx/$f" : undef;
}

# Lines of the error log, by the pid that wrote them.
sub lines_by_pid {
    my ($log, $re) = @_;
    my %n;
    for (split /\n/, $log) {
        $n{$1}++ if /$re/ && /\[pid (\d+)/;
    }
    return \%n;
}

my $prefork = <<"CONF";
LogLevel warn agentshop:info
StartServers 3
MinSpareServers 3
MaxSpareServers 6
MaxRequestWorkers 6
CONF

# ---- the plain configuration: a server and a virtual host ----
my $host_port = free_port();
my ($rc, $log, $pid, $port) = start_httpd(
    dir => $dir, name => 'plain', db => "$dir/shop.db", top => $top, mpm => 'prefork',
    avoid => [$host_port], location => '    SetHandler agentshop', extra => <<"CONF");
$prefork
AgentShopSigningKeyFile "$dir/signing.key"
AgentShopRateLimit off
Listen 127.0.0.1:$host_port
<VirtualHost 127.0.0.1:$host_port>
    DBDParams "$dir/host.db"
    AgentShopBaseURL http://localhost:$host_port/v1
</VirtualHost>
CONF
ok(!defined $rc, 'httpd starts with SetHandler alone in <Location /v1>') or diag $log;
if (!defined $rc) {
    my $idx = "$dir/plain/agentshop-index";
    for my $t ([ 'the server', $port, "$dir/shop.db" ], [ 'the virtual host', $host_port, "$dir/host.db" ]) {
        my ($what, $p, $db) = @$t;
        my @r = search_all($p, 12);
        is(scalar(grep { $_->{code} == 200 } @r), 12, "$what: 12 searches at once, each answered 200")
          or diag join "\n", map { "$_->{code} " . substr($_->{body} // '', 0, 200) } @r;
        my $file = index_file($idx, $db);
        ok($file, "$what: its index is a file in the default directory $idx") or next;
        my @kids = children($pid);
        my @mapping = grep { maps_of($_, $file) } @kids;
        cmp_ok(scalar @mapping, '>=', 2, "$what: children map it (" . scalar(@mapping) . ' of '
               . scalar(@kids) . ')');
    }
    stop_httpd($pid);
    $log = httpd_log("$dir/plain");
    my $builds = () = $log =~ /search index \d+ products, \d+ bytes, built in \d+ ms \(\Q$idx\E\//g;
    is($builds, 2, 'each database\'s index was built once, as its file') or diag $log;
    unlike($log, qr/\(in memory\)|keeps its own copy/, '... and no child built a copy of its own')
      or diag $log;
    unlike($log, qr/\[(?:\S*:)?(?:error|crit|alert|emerg)\]|Segmentation|exit signal/,
           '... with no error in the log') or diag $log;
}

# ---- the same configuration without the signing key: checked as ever ----
($rc, $log, $pid) = start_httpd(dir => $dir, name => 'unsigned', db => "$dir/shop.db", top => $top,
                                location => '    SetHandler agentshop');
stop_httpd($pid) if !defined $rc;
ok(defined $rc && $rc != 0, 'without AgentShopSigningKeyFile anywhere, httpd refuses to start')
  or diag $log;
like($log, qr/\[\S*:crit\].*AgentShopSigningKeyFile is not set/, '... saying the key is not set') or diag $log;

# ---- a directory httpd cannot make: each child says why it keeps a copy ----
open my $plain, '>', "$dir/not-a-directory" or die $!;
close $plain;
my $bad = "$dir/not-a-directory/index";
($rc, $log, $pid, $port) = start_httpd(
    dir => $dir, name => 'private', db => "$dir/private.db", top => $top, mpm => 'prefork',
    location => '    SetHandler agentshop', extra => <<"CONF");
$prefork
AgentShopSigningKeyFile "$dir/signing.key"
AgentShopSearchIndexDir "$bad"
CONF
ok(!defined $rc, 'httpd starts with an index directory it cannot make') or diag $log;
if (!defined $rc) {
    my @r = search_all($port, 12);
    is(scalar(grep { $_->{code} == 200 } @r), 12, '12 searches at once, each answered 200');
    search_all($port, 12);    # more, on the children's copies
    stop_httpd($pid);
    $log = httpd_log("$dir/private");
    my $built = lines_by_pid($log, qr/built in \d+ ms \(in memory\)/);
    my $said = lines_by_pid($log, qr/\[(?:\S*:)?warn\] .*keeps its own copy in memory \(\d+ bytes\), not the file the other processes share: the search index directory \Q$bad\E cannot be made/);
    ok(%$built, 'children built their own copies') or diag $log;
    is_deeply([ sort keys %$said ], [ sort keys %$built ],
              '... and each of them warned why, naming the directory') or diag $log;
    is(scalar(grep { $_ != 1 } values %$said), 0, '... once') or diag explain $said;
}

# ---- a directory made, then no longer writable: the reason is in the log ----
# (the signing key in <Location /v1> here, as the sample configuration has it)
($rc, $log, $pid, $port) = start_httpd(
    dir => $dir, name => 'denied', db => "$dir/denied.db", top => $top, mpm => 'prefork',
    extra => $prefork);
ok(!defined $rc, 'httpd starts with the default index directory') or diag $log;
if (!defined $rc) {
    my $idx = "$dir/denied/agentshop-index";
    ok(-d $idx, "... which it made ($idx)");
    chmod 0555, $idx or die "chmod $idx: $!";    # the children's user owns it: as they are
    my @r = search_all($port, 12);
    is(scalar(grep { $_->{code} == 200 } @r), 12, 'searches are answered from copies in memory');
    chmod 0755, $idx;
    stop_httpd($pid);
    $log = httpd_log("$dir/denied");
    my $said = lines_by_pid($log, qr/\[(?:\S*:)?warn\] .*keeps its own copy in memory \(\d+ bytes\), not the file the other processes share: \Q$idx\E\/\S+ cannot be opened \(Permission denied\)/);
    ok(%$said, 'a child that cannot write there warns why: the file it cannot open, and the error')
      or diag $log;
    is(scalar(grep { $_ != 1 } values %$said), 0, '... once per child') or diag explain $said;
}

# ---- the plain configuration at another path: the location is the base ----
($rc, $log, $pid, $port) = start_httpd(
    dir => $dir, name => 'shop', db => "$dir/shop.db", top => $top, path => '/shop',
    location => '    SetHandler agentshop', extra => <<"CONF");
AgentShopSigningKeyFile "$dir/signing.key"
AgentShopRateLimit off
CONF
ok(!defined $rc, 'httpd starts with SetHandler alone in <Location /shop>') or diag $log;
if (!defined $rc) {
    my $ua = LWP::UserAgent->new(timeout => 60);
    my $res = $ua->get("http://127.0.0.1:$port/shop/search?q=hand+soap&limit=5");
    is($res->code, 200, '... and answers a search under /shop') or diag $res->decoded_content;
    like($res->decoded_content, qr/"results"\s*:\s*\[\s*\{/, '... with results');
    $res = $ua->get("http://127.0.0.1:$port/shop/no-such-thing");
    is($res->code, 404, '... an unknown path under /shop is 404');
    like($res->decoded_content, qr/"error"\s*:\s*"NOT_FOUND"/, '... in the API\'s error object')
      or diag $res->decoded_content;
    is($ua->get("http://127.0.0.1:$port/v1/search?q=soap")->code, 404, '... and /v1 is not the API there');
    stop_httpd($pid);
}

done_testing();
