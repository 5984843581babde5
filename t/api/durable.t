# Durable writes and one writer at a time on SQLite (issue 59,
# docs/storage.md "Durable commits, grouped" and "Checkpoints in turn"):
# - every agentshopctl command that writes has the database's WAL synced
#   before it prints its result (strace sees the fsync/fdatasync first);
# - httpd syncs the WAL before answering a new order, and before answering a
#   replay from an Idempotency-Key record (its first commit may not be on
#   disk yet);
# - every writer, httpd's children and agentshopctl, holds the lock file
#   <database>-lock while it writes or checkpoints: while another process
#   holds it, a command waits and an order waits (then 503), nothing written;
# - orders from several clients, agentshopctl's writes and checkpoints all at
#   once leave a database whose integrity check passes and that holds every
#   order that was answered 201.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use Fcntl qw(:flock);
use File::Temp qw(tempdir);
use JSON::PP;
use POSIX ();
use Time::HiRes qw(time sleep);
use Apache::Test ();
use AgentShop::Test;

plan skip_all => 'the WAL, its syncs and the lock file are SQLite\'s (the suite runs on PostgreSQL)'
  if is_pg();
plan skip_all => 'strace cannot trace a program here'
  unless system('strace -o /dev/null true >/dev/null 2>&1') == 0;

my $top = Apache::Test::vars('serverroot') . '/..';
my $db = Apache::Test::vars('serverroot') . '/var/agentshop.db';
my $dir = tempdir(CLEANUP => 1);
my $json = JSON::PP->new;

# Runs a command line; returns (exit code, stdout, stderr).
sub run_cmd { run_capture($_[0], $dir) }
sub q_args { join ' ', map { my $a = $_; $a =~ s/'/'\\''/g; "'$a'" } @_ }
sub own_ctl { my ($file, @args) = @_; q_args("$top/bin/agentshopctl", '--params', $file, @args) }

# The command under strace: whether, after its last write to the database's
# WAL, a sync of the WAL (or of the database, after a checkpoint) returned
# before the command's first write to stdout (its result). A sync of a new
# WAL's header alone, before its frames, does not count.
sub synced_before_print {
    my ($cmd) = @_;
    my $trace = "$dir/trace";
    # LeakSanitizer cannot run under ptrace (make test-asan): the leak check
    # of these commands is the other tests' (ctl.t, ctl_ops.t), not this one's
    local $ENV{ASAN_OPTIONS} = ($ENV{ASAN_OPTIONS} // '') . ':detect_leaks=0';
    my ($rc, $out, $err) =
      run_cmd("strace -f -y -e trace=fsync,fdatasync,write,pwrite64 -o '$trace' $cmd");
    open my $fh, '<', $trace or die "$trace: $!";
    my @lines = <$fh>;
    my ($print) = grep { $lines[$_] =~ /\bwrite\(1</ } 0 .. $#lines;
    return ($rc, $out, $err, 0) unless defined $print;
    my ($last) = reverse grep { $lines[$_] =~ /\bpwrite64\(\d+<[^>]*\.db-wal>/ } 0 .. $print;
    return ($rc, $out, $err, 0) unless defined $last;
    my $synced = grep { $lines[$_] =~ /\bf(?:data)?sync\(\d+<[^>]*\.db(?:-wal)?>\) = 0/ } $last .. $print;
    return ($rc, $out, $err, $synced > 0);
}

# ---- agentshopctl: every write synced before it says so ----

my $own = "$dir/own.db";
my ($rc, $out, $err) = run_cmd(own_ctl($own, 'init', '--demo'));
is($rc, 0, 'a database of our own with the demo catalogue') or diag $err;
# A connection kept open, as httpd's pooled ones are: without one the tool's
# close, the last, would checkpoint (and so sync) before it prints.
# Keeps the file open in a process group of its own (the shell's sleep too),
# until stop_holder.
sub hold_open {
    my ($file) = @_;
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        setpgrp(0, 0);
        open STDOUT, '>', '/dev/null';
        exec 'sqlite3', $file, 'SELECT COUNT(*) FROM meta;', '.shell sleep 600';
        exit 127;
    }
    sleep 0.3;
    return $pid;
}
sub stop_holder { my ($pid) = @_; kill 'TERM', -$pid; waitpid $pid, 0 }
my $holder = hold_open($own);

my %made;
my @writes = (
    [ 'key create' => sub { ('key', 'create', '--user', 'durable-u') },
      sub { $made{key} = $json->decode(shift)->{id} } ],
    [ 'key revoke' => sub { ('key', 'revoke', $made{key}) } ],
    [ 'mandate create' => sub { ('mandate', 'create', '--user', 'durable-u', '--categories',
                                 'hand-soap', '--per-order-eur', 10, '--monthly-eur', 50,
                                 '--confirm-above-eur', 10) },
      sub { $made{mandate} = $json->decode(shift)->{id} } ],
    [ 'mandate revoke' => sub { ('mandate', 'revoke', $made{mandate}) } ],
    [ 'offer set' => sub { ('offer', 'set', 'AF-0001-pleissewerk', '--stock', 11) } ],
    [ 'catalogue import' => sub {
          open my $fh, '>', "$dir/one.jsonl" or die $!;
          print $fh '{"type":"offer","offer_id":"AF-0001-pleissewerk","sku":"AF-0001",'
            . '"merchant":"m-pleissewerk","price_cents":6060,"retail_price_cents":6379,'
            . '"price_label":"Agent-only price (demo)","delivery_days":6,"stock":12}' . "\n";
          close $fh;
          ('catalogue', 'import', "$dir/one.jsonl") } ],
    [ 'user enrol' => sub { ('user', 'enrol', 'durable-u') } ],
);
for my $w (@writes) {
    my ($name, $args, $after) = @$w;
    my ($c, $o, $e, $synced) = synced_before_print(own_ctl($own, $args->()));
    is($c, 0, "agentshopctl $name succeeds") or diag $e;
    ok($synced, "... and its commit is synced to disk before it prints its result");
    $after->($o) if $after && !$c;
}
my ($stock) = `sqlite3 '$own' "SELECT stock FROM offers WHERE id = 'AF-0001-pleissewerk'"`;
is($stock + 0, 12, 'the writes are there');

# catalogue generate, into a database without a catalogue
my $gen = "$dir/gen.db";
($rc, undef, $err) = run_cmd(own_ctl($gen, 'init'));
is($rc, 0, 'an empty database of our own') or diag $err;
my $gen_holder = hold_open($gen);
my ($c, $o, $e, $synced) = synced_before_print(own_ctl($gen, 'catalogue', 'generate', '--products', 30));
is($c, 0, 'agentshopctl catalogue generate succeeds') or diag $e;
ok($synced, '... and its commit is synced to disk before it prints its result');
stop_holder($_) for $holder, $gen_holder;

# order ship and deliver, on the test database (httpd keeps it open)
my ($user, $key) = new_agent();
my $H = agent_headers($key);
new_mandate($user, per_order => 1000, monthly => 100000, confirm_above => 1000);
my ($p, $off) = buyable_offer(max_cents => 5000, min_stock => 3);
ok($p, "an offer to buy ($off->{offer_id})");
sub place {
    my ($ikey) = @_;
    my ($res, $q) = post_json('/quotes', $H, { sku => $p->{sku}, offer_id => $off->{offer_id} });
    die 'quote failed: ' . $res->content unless $res->code == 201;
    return ($q, post_json('/orders', agent_headers($key, 'Idempotency-Key' => $ikey),
                          { quote_id => $q->{id}, reason => 'Durable writes, synced before answering.' }));
}
my (undef, $res, $order) = place("durable-ship-$$");
is($res->code, 201, 'an order placed') or diag $res->content;
for my $sub ('ship', 'deliver') {
    ($c, $o, $e, $synced) = synced_before_print(ctl_argv('order', $sub, $order->{id}));
    is($c, 0, "agentshopctl order $sub succeeds") or diag $e;
    ok($synced, '... and its commit is synced to disk before it prints its result');
}

# ---- httpd: a new order and a replay answered once the WAL is synced ----

# httpd's children, traced while $do runs: the syncs of the test database's WAL.
sub wal_syncs_during {
    my ($do) = @_;
    open my $pf, '<', Apache::Test::vars('t_logs') . '/httpd.pid' or die "httpd.pid: $!";
    chomp(my $parent = <$pf>);
    my @kids;
    for my $stat (glob '/proc/[0-9]*/stat') {
        open my $fh, '<', $stat or next;
        my $s = <$fh> // next;
        push @kids, $1 if $s =~ /^(\d+) \(.*\) \S+ (\d+) / && $2 == $parent;
    }
    my $trace = "$dir/httpd-trace";
    unlink $trace;
    my $tracer = fork // die "fork: $!";
    if (!$tracer) {
        open STDERR, '>', "$dir/strace-err" or die $!;
        exec 'strace', '-f', '-y', '-e', 'trace=fsync,fdatasync', '-o', $trace, map { ('-p', $_) } @kids;
        exit 127;
    }
    my $until = time + 5;
    while (time < $until) { # every child attached
        open my $fh, '<', "$dir/strace-err" or next;
        my $n = () = join('', <$fh>) =~ /attached/g;
        last if $n >= @kids;
        sleep 0.05;
    }
    sleep 0.2;
    my @got = $do->();
    sleep 0.3;
    kill 'INT', $tracer;
    waitpid $tracer, 0;
    open my $fh, '<', $trace or return (0, @got);
    my $n = grep { /\bf(?:data)?sync\(\d+<\Q$db\E-wal>\) = 0/ } <$fh>;
    return ($n, @got);
}

my ($q2, $res2, $order2);
my ($n) = wal_syncs_during(sub { ($q2, $res2, $order2) = place("durable-new-$$") });
is($res2->code, 201, 'a new order: 201') or diag $res2->content;
ok($n >= 1, "... answered once httpd synced the WAL ($n syncs)");
my $body = { quote_id => $q2->{id}, reason => 'Durable writes, synced before answering.' };
my ($replay, $rv);
($n) = wal_syncs_during(sub {
    ($replay, $rv) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => "durable-new-$$"), $body);
});
is($replay->code, 201, 'the same order again with its Idempotency-Key: the first answer');
is($replay->header('Idempotent-Replayed'), 'true', '... a replay');
is($rv->{id}, $order2->{id}, '... of the same order');
ok($n >= 1, "... answered only after a sync of the WAL, which covers the first commit ($n syncs)");

# ---- one writer at a time: the lock file, for agentshopctl and httpd ----

# Holds <database>-lock from another process until killed.
sub hold_lock {
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        open my $fh, '>>', "$db-lock" or die "$db-lock: $!";
        flock $fh, LOCK_EX or die "flock: $!";
        sleep 600;
        POSIX::_exit(0);
    }
    sleep 0.3;
    return $pid;
}

my ($u2, undef, $kid) = new_agent();
my $locker = hold_lock();
my $t0 = time;
my $revoker = fork // die "fork: $!";
if (!$revoker) {
    exec 'sh', '-c', ctl_argv('key', 'revoke', $kid) . " >'$dir/revoke.out' 2>&1";
    exit 127;
}
sleep 1.5;
is(waitpid($revoker, POSIX::WNOHANG()), 0, 'agentshopctl key revoke waits while another process holds the writer lock');
is((sql("SELECT revoked_at IS NULL FROM agent_keys WHERE id = '$kid'"))[0][0], 1, '... having written nothing');
{
    local $AgentShop::Test::BASE = '/fast/v1';
    my $quotes = (sql("SELECT COUNT(*) FROM quotes WHERE user_id = '$user'"))[0][0];
    my $t1 = time;
    my ($qr, $qv) = post_json('/quotes', $H, { sku => $p->{sku}, offer_id => $off->{offer_id} });
    is_json_error($qr, $qv, 503, 'SERVICE_UNAVAILABLE', 'a write to httpd meanwhile waits too, then 503');
    ok(time - $t1 >= 1.5, sprintf('... after AgentShopWriteWait (2 s): %.1f s', time - $t1));
    is((sql("SELECT COUNT(*) FROM quotes WHERE user_id = '$user'"))[0][0], $quotes, '... nothing written');
}
kill 'TERM', $locker;
waitpid $locker, 0;
waitpid $revoker, 0;
is($? >> 8, 0, 'once the lock is free, the command goes on and succeeds');
ok(time - $t0 < 10, '... within its wait');
is((sql("SELECT revoked_at IS NOT NULL FROM agent_keys WHERE id = '$kid'"))[0][0], 1, '... the key is revoked');

# ---- orders, agentshopctl's writes and checkpoints all at once ----

# the orders' offer keeps its stock (the suite checks every offer's stock
# against its orders); the tool changes another offer's and puts it back
my ($bp, $boff) = buyable_offer(max_cents => 3000, min_stock => 30);
ok($bp, "an offer with stock for every order ($boff->{offer_id}, $boff->{stock} units)");
my ($other) = grep { $_->{offer_id} ne $boff->{offer_id} } @{ $bp->{offers}{ranked} };
my @quotes = map {
    my ($r, $q) = post_json('/quotes', $H, { sku => $bp->{sku}, offer_id => $boff->{offer_id} });
    die 'quote failed: ' . $r->content unless $r->code == 201;
    $q->{id}
} 1 .. 24;
my $busy = fork // die "fork: $!";
if (!$busy) { # agentshopctl writing and checkpointing in a loop until told to stop
    my $i = 0;
    while (!-e "$dir/stop") {
        my @cmd = $i % 3 == 0 ? ('checkpoint')
                : $i % 3 == 1 ? ('key', 'create', '--user', "busy-$$")
                : $other ? ('offer', 'set', $other->{offer_id}, '--stock', 50 + $i % 7)
                : ('checkpoint');
        system(ctl_argv(@cmd) . ' >/dev/null 2>&1');
        $i++;
    }
    POSIX::_exit(0);
}
my @results = concurrently(map {
    my $qid = $_;
    sub { post_json('/orders', agent_headers($key, 'Idempotency-Key' => "mix-$qid"),
                    { quote_id => $qid, reason => 'Durable writes under load.' }) }
} @quotes);
my ($cp_rc, $cp_out) = run_cmd(ctl_argv('checkpoint'));
open my $stop, '>', "$dir/stop" or die $!;
close $stop;
waitpid $busy, 0;
is($cp_rc, 0, 'agentshopctl checkpoint runs beside them');
my @ok = map { $_->{body}{id} } grep { $_->{code} == 201 } @results;
is(scalar @ok, scalar @quotes, 'every order of several clients at once: 201')
  or diag join ' ', map { $_->{code} } @results;
is((sql('PRAGMA integrity_check'))[0][0], 'ok', 'the database passes its integrity check');
my %in = map { $_->[0] => 1 } sql("SELECT id FROM orders WHERE user_id = '$user'");
is(scalar(grep { !$in{$_} } @ok), 0, 'every order answered 201 is in the database');
ctl('offer', 'set', $other->{offer_id}, '--stock', $other->{stock}) if $other;

done_testing();
