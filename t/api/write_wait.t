# Bounded waits on the write lock (issue 17): while another process holds the
# SQLite database (a backup, the sqlite3 shell), a write waits at most
# AgentShopWriteWait seconds (2 on /fast/v1) for the other writers and the
# database together, then fails with 503 and writes nothing; writers queued
# behind it fail at their own deadlines, not one after another; reads go on.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use Time::HiRes qw(time);
use Apache::Test ();
use AgentShop::Test;

plan skip_all => 'the outside lock is an SQLite file lock (the suite runs on PostgreSQL)' if is_pg();

my $db = Apache::Test::vars('serverroot') . '/var/agentshop.db';
my ($user, $key) = new_agent();
new_mandate($user);
my $H = agent_headers($key);
my ($p, $off) = buyable_offer(category => 'hand-soap', min_stock => 2);
ok($p, "a product to quote ($p->{sku})");
my $quote = { sku => $p->{sku}, offer_id => $off->{offer_id} };
local $AgentShop::Test::BASE = '/fast/v1';

# Holds the database's write lock for $secs seconds from another process.
sub hold_database {
    my ($secs) = @_;
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        exec 'sqlite3', '-cmd', '.timeout 5000', '-cmd', 'BEGIN IMMEDIATE;', $db, ".shell sleep $secs";
        exit 127;
    }
    select undef, undef, undef, 0.5; # until it holds the lock
    return $pid;
}

my $quotes_before = (sql("SELECT COUNT(*) FROM quotes WHERE user_id = '$user'"))[0][0];
my $holder = hold_database(12);
my $t0 = time;
my ($res, $v) = post_json('/quotes', $H, $quote);
my $took = time - $t0;
is_json_error($res, $v, 503, 'SERVICE_UNAVAILABLE', 'a write while another process holds the database: 503');
ok($took >= 1.5 && $took < 4, sprintf('... after waiting about AgentShopWriteWait (2 s): %.1f s', $took));

# Four writers at once: each fails at its own deadline, none waits for the
# ones before it to time out.
$t0 = time;
my @results = concurrently(map { sub { post_json('/quotes', $H, $quote) } } 1 .. 4);
$took = time - $t0;
is_deeply([ map { $_->{code} } @results ], [ (503) x 4 ], 'four writers at once: 503 each');
ok($took < 4.5, sprintf('... all answered within one wait, not four (%.1f s)', $took));

$t0 = time;
($res) = api_get("/products/$p->{sku}");
is($res->code, 200, 'reads go on meanwhile');
ok(time - $t0 < 1, '... without waiting');

waitpid $holder, 0;
is((sql("SELECT COUNT(*) FROM quotes WHERE user_id = '$user'"))[0][0], $quotes_before, 'nothing was written');
($res, $v) = post_json('/quotes', $H, $quote);
is($res->code, 201, 'once the database is free, the same write succeeds') or diag $res->content;

done_testing();
