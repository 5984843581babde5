# A child killed while it writes the search index file (docs/search.md, the
# index's life): its temporary file ("<file>.tmp.<pid>", named by its pid) is
# removed by the next child that takes the database's lock, not left until
# httpd starts again, and exactly one child builds that catalogue version
# after it: the others map the file. An httpd of the test's own
# (AgentShop::OwnHttpd), prefork, on a generated catalogue large enough that
# the build takes a moment; the builder is found by its temporary file.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use File::Temp qw(tempdir);
use LWP::UserAgent;
use POSIX qw(WNOHANG);
use Time::HiRes qw(sleep time);
use AgentShop::Test;
use AgentShop::OwnHttpd;
use Apache::Test ();

plan skip_all => 'the httpds of this test use SQLite (the suite runs on PostgreSQL)' if is_pg();
plan skip_all => 'runs as a user other than root (scripts/apache-test.sh)' if $> == 0;

my $PRODUCTS = 40000;
my $top = Apache::Test::vars('serverroot') . '/..';
my $ctl = "$top/bin/agentshopctl";
my $dir = tempdir(CLEANUP => 1);

sub sh { my $rc = system(@_); die "@_ failed" if $rc; }
sh("$ctl --params '$dir/shop.db' init >/dev/null");
sh("$ctl --params '$dir/shop.db' catalogue generate --products $PRODUCTS --seed 59 >/dev/null");

my ($rc, $log, $pid, $port) = start_httpd(
    dir => $dir, name => 'killed', db => "$dir/shop.db", top => $top, mpm => 'prefork',
    extra => <<'CONF');
LogLevel warn agentshop:info
StartServers 4
MinSpareServers 4
MaxSpareServers 6
MaxRequestWorkers 6
CONF
ok(!defined $rc, 'httpd starts') or diag $log;
my $idx = "$dir/killed/agentshop-index";

sub files_like {
    my ($re) = @_;
    opendir(my $d, $idx) or return ();
    my @f = grep { /$re/ } readdir $d;
    closedir $d;
    return @f;
}

# Searches in processes of their own, one per child at once, each asking
# until it is answered (the killed child's client gets no answer).
sub search_until_answered {
    my $ua = LWP::UserAgent->new(timeout => 120, keep_alive => 0);
    my $t = time + 120;
    while (time < $t) {
        my $res = $ua->get("http://127.0.0.1:$port/v1/search?q=cable&limit=5");
        return $res->code if $res->code == 200;
        sleep 0.2;
    }
    return 0;
}

if (!defined $rc) {
    my @clients;
    for (1 .. 4) {
        my $c = fork // die "fork: $!";
        if (!$c) { POSIX::_exit(search_until_answered() == 200 ? 0 : 1) }
        push @clients, $c;
    }
    # The builder: the pid in the temporary file's name.
    my ($tmp, $builder);
    my $t = time + 60;
    while (!$builder && time < $t) {
        ($tmp) = files_like(qr/\.idx\.tmp\.\d+$/);
        ($builder) = ($tmp // '') =~ /\.tmp\.(\d+)$/;
        sleep 0.005 unless $builder;
    }
    ok($builder, "a child writes the index file ($tmp)") or diag httpd_log("$dir/killed");
    ok($builder && kill('KILL', $builder), "... and is killed (kill -9 $builder)") if $builder;

    my $answered = 0;
    for my $c (@clients) { waitpid($c, 0); $answered++ if $? == 0 }
    is($answered, 4, 'every client is answered once another child has built the index');
    my @idx = files_like(qr/-\d+\.idx$/);
    is(scalar @idx, 1, 'the index file is there') or diag "@idx";
    my @left = files_like(qr/\.tmp\./);
    is_deeply(\@left, [], 'no temporary file is left: the dead writer\'s was removed') or diag "@left";
    stop_httpd($pid);
    $log = httpd_log("$dir/killed");
    my $built = () = $log =~ /search index \d+ products, \d+ bytes, built in \d+ ms \(\Q$idx\E\//g;
    is($built, 1, 'the version was built once after the kill (the other children mapped it)')
      or diag $log;
    like($log, qr/removed 1 temporary file of a writer that died/, '... by the child that removed the temporary file')
      or diag $log;
    like($log, qr/search index $PRODUCTS products, \d+ bytes, mapped/, '... and mapped by the others')
      or diag $log;
}

done_testing();
