# Crash safety: agents order concurrently while httpd's child processes are
# killed (SIGKILL) again and again. Afterwards: every 201/202 an agent saw is
# on disk; no order lacks its effects (stock, budget); the budget holds; no
# Idempotency-Key is left in flight (a killed request's claim is rolled back
# with its order) and every unanswered key answers at once; the database is
# intact and httpd still serves, writes included. docs/buying.md (Idempotency,
# "A 201 or 202 means the order is on disk"), docs/storage.md.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use AgentShop::Test;
use Apache::Test ();
use Apache::TestRequest ();
use HTTP::Request;
use LWP::UserAgent;
use JSON::PP;
use POSIX ();
use Time::HiRes qw(time sleep);

my $T0 = time;
my $LOAD = 14;          # seconds of ordering under the killer
my $CLIENTS = 8;        # forked agents
my $MAX_ORDERS = 90;    # per agent (at most 34 units of each of its four offers)
my $TRIES = 20;         # attempts per request on a connection error or a 5xx (about 15 s:
                        # children killed in a row restart slowly, under ASan on a loaded
                        # machine slower still; 10 attempts ran out there once)
my $reason = 'Crash-safety test: best-ranked verified offer, bought under load.';
my $J = JSON::PP->new->utf8->canonical;

my ($user, $key) = new_agent();
my $H = agent_headers($key);

# Offers with stock to spare, a few per agent, so stock never refuses an order.
my @offers;
for my $p (@{ demo_data('products') }) {
    my (undef, $v) = api_get("/products/$p->{sku}");
    next unless $v && $v->{offers};
    my ($o) = grep { $_->{stock} >= 40 && $_->{price_cents} <= 2500 } @{ $v->{offers}{ranked} };
    push @offers, { sku => $p->{sku}, offer_id => $o->{offer_id}, price => $o->{price_cents} } if $o;
    last if @offers == 4 * $CLIENTS;
}
is(scalar @offers, 4 * $CLIENTS, 'offers with stock to spare, four per agent') or BAIL_OUT('not enough stock');
sub plan_of {    # the offer and quantity of agent $c's $k-th order
    my ($c, $k) = @_;
    return ($offers[4 * $c + $k % 4], int($k / 4) % 2 + 1);
}
my ($budget, $top) = (0, 0);
for my $c (0 .. $CLIENTS - 1) {
    for my $k (0 .. $MAX_ORDERS - 1) {
        my ($o, $qty) = plan_of($c, $k);
        $budget += $o->{price} * $qty;
        $top = $o->{price} if $o->{price} > $top;
    }
}
# Budget for every order the agents may make and one more at the end; one
# unit (at most $top) is placed at once, two units mostly wait for a human
# (both reserve budget and stock).
my $monthly = $budget + 2 * $top;
my $md = new_mandate($user, per_order => sprintf('%.2f', 2 * $top / 100), monthly => sprintf('%.2f', $monthly / 100),
                     confirm_above => sprintf('%.2f', $top / 100));

my $pidfile = Apache::Test::vars('t_logs') . '/httpd.pid';
my $parent = do { open my $fh, '<', $pidfile or die "$pidfile: $!"; my $x = <$fh>; chomp $x; $x };
ok($parent =~ /^\d+$/ && kill(0, $parent), "httpd's parent process ($parent)");
sub children {    # httpd's children: processes whose parent is httpd's parent (never the parent)
    my @kids;
    opendir my $d, '/proc' or return ();
    for my $pid (grep { /^\d+$/ } readdir $d) {
        open my $fh, '<', "/proc/$pid/stat" or next;
        my $stat = <$fh> // next;
        my ($ppid) = substr($stat, rindex($stat, ')') + 2) =~ /^\S+ (\d+)/;
        push @kids, $pid if defined $ppid && $ppid == $parent && $pid != $parent;
    }
    return @kids;
}
cmp_ok(scalar children(), '>=', 1, 'httpd has child processes to kill');

# ---- the load ----
my $url = 'http://' . Apache::TestRequest::hostport() . '/v1';
sub call {    # (code, data, replayed); code 0 when the connection failed
    my ($ua, $method, $path, $hdr, $body) = @_;
    my $res = $ua->request(HTTP::Request->new($method, "$url$path", $hdr, $body));
    my $code = ($res->header('Client-Warning') // '') eq 'Internal response' ? 0 : $res->code;
    my $data = eval { $J->decode($res->content) };
    return ($code, $data, ($res->header('Idempotent-Replayed') // '') eq 'true');
}
sub transient { $_[0] == 0 || $_[0] >= 500 }

sub agent {
    my ($c, $deadline) = @_;
    my $ua = LWP::UserAgent->new(keep_alive => 1, timeout => 12);
    my @recs;
    for (my $k = 0; $k < $MAX_ORDERS && time < $deadline; $k++) {
        my ($o, $qty) = plan_of($c, $k);
        my ($q, @qcodes);
        for my $t (1 .. $TRIES) {    # a quote commits nothing: just ask again
            my ($code, $d) = call($ua, 'POST', '/quotes', $H, $J->encode({ sku => $o->{sku}, offer_id => $o->{offer_id}, quantity => $qty }));
            push @qcodes, $code . ($d && $d->{error} ? " $d->{error}" : '');
            if ($code == 201) { $q = $d; last }
            last unless transient($code);
            sleep($t < 5 ? 0.1 * $t : 1);
        }
        unless ($q) { push @recs, { key => "quote-$c-$k", quote_failed => join(', ', @qcodes), tries => [] }; next }
        my $rec = { key => "crash-$$-$c-$k", body => $J->encode({ quote_id => $q->{id}, reason => $reason }),
                    total => $q->{total_cents}, tries => [] };
        for (1 .. $TRIES) {
            my ($code, $d, $replayed) = call($ua, 'POST', '/orders', agent_headers($key, 'Idempotency-Key' => $rec->{key}), $rec->{body});
            push @{ $rec->{tries} }, $code;
            if ($code == 201 || $code == 202) {
                @$rec{qw(code order_id replayed)} = ($code, $code == 201 ? $d->{id} : $d->{order_id}, $replayed);
                last;
            }
            if (transient($code)) { my $n = @{ $rec->{tries} }; sleep($n < 5 ? 0.1 * $n : 1); next }
            # 409 IDEMPOTENCY_KEY_IN_USE would be a claim left by a killed attempt: left
            # unanswered, for the audit below (which resends it and expects an answer).
            last if $code == 409 && ($d->{error} // '') eq 'IDEMPOTENCY_KEY_IN_USE';
            @$rec{qw(code error)} = ($code, $d->{error} // 'none');
            last;
        }
        push @recs, $rec;
    }
    return \@recs;
}

sub killer {
    my ($deadline) = @_;
    my $kills = 0;
    while (time < $deadline) {
        sleep 0.15 + rand 0.25;
        my @kids = children();
        next unless @kids;
        my $victim = $kids[ int rand @kids ];
        next if $victim == $parent;
        $kills++ if kill 'KILL', $victim;
    }
    return { kills => $kills };
}

sub spawn {    # runs $job in a child process; returns [pid, reader]
    my ($job) = @_;
    pipe(my $r, my $w) or die "pipe: $!";
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        close $r;
        my $out = eval { $job->() } // { died => "$@" };
        print $w $J->encode($out);
        close $w;
        POSIX::_exit(0);
    }
    close $w;
    return [ $pid, $r ];
}
sub collect {
    my ($kid) = @_;
    my ($pid, $r) = @$kid;
    local $/;
    my $s = <$r>;
    waitpid $pid, 0;
    return $s ? $J->decode($s) : { died => 'no output' };
}

my $deadline = time + $LOAD;
my @agents = map { my $c = $_; spawn(sub { agent($c, $deadline) }) } 0 .. $CLIENTS - 1;
my $k = spawn(sub { killer($deadline) });
my @recs = map { my $x = collect($_); ref $x eq 'ARRAY' ? @$x : do { diag "an agent died: $x->{died}"; () } } @agents;
my $kills = collect($k)->{kills} // 0;
my $load_end = time;

my @quote_failed = grep { $_->{quote_failed} } @recs;
@recs = grep { !$_->{quote_failed} } @recs;
my @seen = grep { $_->{order_id} } @recs;
my @unanswered = grep { !defined $_->{code} } @recs;
my %tries;
$tries{$_}++ for map { @{ $_->{tries} } } @recs;
diag sprintf 'load: %.1f s, %d kills, %d orders tried, %d answered 201/202, %d without an answer; attempts by status: %s',
  $load_end - $T0, $kills, scalar @recs, scalar @seen, scalar @unanswered,
  join(' ', map { "$_:$tries{$_}" } sort { $a <=> $b } keys %tries);
cmp_ok($kills, '>=', 10, 'the killer killed httpd children again and again');
cmp_ok(scalar @seen, '>=', 50, 'the agents placed orders all the same');
is_deeply([ map { "$_->{key}: $_->{quote_failed}" } @quote_failed ], [], 'every quote was answered within its retries');
is_deeply([ map { "$_->{key}: $_->{code} $_->{error}" } grep { defined $_->{code} && !$_->{order_id} } @recs ], [],
          'no order was refused (budget and stock allow every one)');
is(kill(0, $parent) ? 1 : 0, 1, 'the httpd parent survived');

# httpd answers again (its parent starts new children).
my $alive = 0;
for (1 .. 40) {
    my ($res) = api_get('/devices?limit=1');
    if ($res->code == 200) { $alive = 1; last }
    sleep 0.25;
}
ok($alive, 'httpd answers after the kills');

# ---- every 201/202 a client saw is on disk ----
my %db = map { $_->[0] => { status => $_->[1], budget => $_->[2], quantity => $_->[3], offer => $_->[4] } }
  sql("SELECT id, status, budget_cents, quantity, offer_id FROM orders WHERE mandate_id = '$md->{id}'");
is_deeply([ grep { !$db{ $_->{order_id} } } @seen ], [], 'every order id a client got with 201/202 is in the database');
my %by_id;
push @{ $by_id{ $_->{order_id} } }, $_->{key} for @seen;
is_deeply([ grep { @{ $by_id{$_} } > 1 } sort keys %by_id ], [], '... each from one Idempotency-Key only');

# ---- no Idempotency-Key stays in flight ----
# A key is claimed in the order's own transaction: a killed request's claim
# is rolled back with its order, so nothing is left in flight.
my @flight = sql("SELECT key, lease_until, created_at FROM idempotency WHERE user_id = '$user' AND state = 'in_flight'");
is_deeply([ map { $_->[0] } @flight ], [], 'no Idempotency-Key is in flight after the kills');

sub resend {
    my ($rec) = @_;
    my ($res, $d) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => $rec->{key}), $rec->{body});
    for (1 .. 3) {    # a stale keep-alive connection from before the kills
        last unless $res->code == 500 && ($res->header('Client-Warning') // '') eq 'Internal response';
        ($res, $d) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => $rec->{key}), $rec->{body});
    }
    return ($res, $d);
}

# Right away, a key without an answer either replays the answer its request
# committed before the kill, or (the kill rolled it back) runs now: never 409.
for my $rec (@unanswered) {
    my ($res, $d) = resend($rec);
    if ($res->code == 201 || $res->code == 202) {
        @$rec{qw(code order_id replayed)} = ($res->code, $res->code == 201 ? $d->{id} : $d->{order_id}, $res->header('Idempotent-Replayed'));
        pass("$rec->{key}: resent without waiting, " . $res->code . ($rec->{replayed} ? ' replayed' : ' ordered now'));
    } else {
        fail("$rec->{key}: resent, " . $res->code . ' ' . substr($res->content, 0, 200));
    }
}

# Every answered key replays its first answer.
my @mismatch;
for my $rec (grep { $_->{order_id} } @recs) {
    my ($res, $d) = resend($rec);
    my $id = $res->code == 201 ? $d->{id} : $d->{order_id};
    push @mismatch, "$rec->{key}: " . $res->code . ' ' . ($id // '-') . " (first $rec->{order_id})"
      unless ($res->code == 201 || $res->code == 202) && ($res->header('Idempotent-Replayed') // '') eq 'true'
        && defined $id && $id eq $rec->{order_id};
}
is_deeply(\@mismatch, [], 'every key replays the same order, marked Idempotent-Replayed');

# No phantom purchases: every order in the database reached an agent.
%db = map { $_->[0] => { status => $_->[1], budget => $_->[2] } }
  sql("SELECT id, status, budget_cents FROM orders WHERE mandate_id = '$md->{id}'");
my %known = map { $_->{order_id} => 1 } grep { $_->{order_id} } @recs;
is_deeply([ sort grep { !$known{$_} } keys %db ], [], 'every order in the database is one an agent was told of');
is_deeply([ sort grep { !$db{$_} } keys %known ], [], '... and every order an agent was told of is in the database');
is_deeply([ sort grep { $db{$_}{status} !~ /^(placed|awaiting_confirmation)$/ } keys %db ], [],
          '... placed or awaiting confirmation, as the agents were told');

# ---- no order without its effects ----
# For every offer: stock + units of live orders = the data file's stock.
# Returned orders count as well: their items are not put back in stock
# (docs/orders.md), so their units left the offer for good.
my %initial = map { my $o = $_; map { $_->{offer_id} => $_->{stock} } @{ $o->{offers} } } @{ demo_data('products') };
my %held = map { $_->[0] => $_->[1] }
  sql("SELECT offer_id, SUM(quantity) FROM orders WHERE status IN ('placed','awaiting_confirmation','shipped','delivered','returned') GROUP BY offer_id");
my @off = grep { my ($id, $s) = @$_; $s + ($held{$id} // 0) != ($initial{$id} // -1) } sql('SELECT id, stock FROM offers WHERE withdrawn_at IS NULL');
is_deeply([ map { "$_->[0]: stock $_->[1] + held " . ($held{ $_->[0] } // 0) . " != $initial{$_->[0]}" } @off ], [],
          'for every offer, stock plus the units of live orders equals its initial stock');
is(scalar sql('SELECT id FROM offers WHERE stock < 0'), 0, 'no offer has negative stock');

# ---- the budget ----
my ($sum) = map { $_->[0] } sql("SELECT COALESCE(SUM(budget_cents), 0) FROM orders WHERE mandate_id = '$md->{id}'");
my ($res, $mv) = api_get('/mandates/current', $H);
is($res->code, 200, 'GET /mandates/current');
is($mv->{spent_this_month_cents}, $sum, "the mandate's spent equals the budget its orders hold");
my $told = 0;
$told += $_->{total} for grep { $_->{order_id} } @recs;
is($sum, $told, '... which is the total of the orders the agents were told of');
cmp_ok($mv->{spent_this_month_cents}, '<=', $monthly, '... within the monthly limit');
is($mv->{remaining_this_month_cents}, $monthly - $mv->{spent_this_month_cents}, '... and the remaining budget agrees');

# ---- the database and the service ----
if (is_pg()) {    # PostgreSQL enforces the foreign keys itself; its pages are checksummed
    is_deeply([ sql("SELECT o.id FROM orders o LEFT JOIN quotes q ON q.id = o.quote_id WHERE q.id IS NULL") ], [],
              'every order has its quote');
} else {
    is_deeply([ map { $_->[0] } sql('PRAGMA integrity_check') ], ['ok'], 'PRAGMA integrity_check: ok');
    is_deeply([ sql('PRAGMA foreign_key_check') ], [], 'PRAGMA foreign_key_check: no dangling reference');
}
my ($q2res, $q2) = post_json('/quotes', $H, { sku => $offers[0]{sku}, offer_id => $offers[0]{offer_id} });
is($q2res->code, 201, 'httpd still quotes');
($res, my $o2) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => "crash-$$-after"), { quote_id => $q2->{id}, reason => $reason });
is($res->code, 201, '... and still orders (no write lock was left behind by a killed process)') or diag $res->content;
($res, $o2) = post_json("/orders/$o2->{id}/cancel", $H, '') if $o2 && $o2->{id};
is($o2->{status}, 'cancelled', '... and cancels');
diag sprintf 'crash.t ran %.1f s', time - $T0;

# mandate_spent, kept by triggers on orders, against the orders themselves.
is_deeply([ spent_mismatches() ], [], "every mandate's running total of a month equals the sum of its orders' budgets, after the kills");

done_testing();
