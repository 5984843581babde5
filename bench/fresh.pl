#!/usr/bin/perl
# make bench: how soon a catalogue change shows in the searches of every httpd
# child, while the children serve a load (scripts/bench.sh runs wrk beside it).
#
#   bench/fresh.pl find BASE CANDIDATES
#       CANDIDATES: lines "sku<TAB>stock<TAB>name" of products with one offer
#       in stock. Prints "sku<TAB>stock<TAB>path" for the first whose name,
#       searched with an offer filter (GET BASE/v1/search?q=NAME&max_price=...),
#       lists it among the results; exits 1 when none does.
#   bench/fresh.pl watch BASE KEY SKU STOCK PATH ACCESS_LOG TAG CHILDREN POLL_BASE...
#       Checks that PATH lists SKU on every POLL_BASE, then buys the last units
#       of its offer (POST /quotes with quantity STOCK, POST /orders, as the
#       agent KEY on BASE): the product is then out of stock, and the search,
#       with its offer filter, must exclude it ("Out of stock") instead of
#       listing it. From the order's 201, four pollers send PATH again and
#       again on connections each opened before the order and kept alive (so
#       every child is asked from the first moment, not only when it wins a new
#       connection; each poller opens them until the access log says they
#       reach every child), taking the POLL_BASEs in turn, with a header
#       X-Bench-Poll: TAG-K-N that the bench's access log records beside the
#       child's pid (%P). They go on in rounds of 2 s until every child of CHILDREN (pids,
#       space-separated) has answered on every base and its last answer showed
#       the change, at most 10 s. Then, per base and child, by the time each
#       request began in the child (%{begin:usec}t and %D of the access log):
#       its answers, the last one without the change and the first after it
#       with it. The last lines: "fresh_ms MS", when the last child's first
#       answer for good ended (ms after the order's 201; "none" when a child
#       never showed the change), "fresh_stale_ms MS", when the last answer
#       without it began ("-" for none), and "fresh_verdict" met, MISSED or
#       unknown for "every child within 1 s" (see report below).
use strict;
use warnings;
use HTTP::Tiny;
use IO::Handle;
use JSON::PP qw(decode_json encode_json);
use Time::HiRes qw(time sleep);

use constant POLLERS => 4; # pollers at once
use constant CONNS => 2;   # connections of a poller to each base

my $http = HTTP::Tiny->new(keep_alive => 0, timeout => 30, agent => 'agentshop-bench/1.0');

sub esc { my $s = shift; $s =~ s/([^A-Za-z0-9._~-])/sprintf('%%%02X', ord $1)/ge; $s }

# 1 when the page lists SKU among its results, 0 when not; dies on an error.
# With UA (an HTTP::Tiny), on its connection.
sub listed {
    my ($url, $sku, $headers, $ua) = @_;
    my $r = ($ua // $http)->get($url, {headers => $headers // {}});
    die "GET $url: $r->{status} $r->{content}\n" unless $r->{status} == 200;
    my $page = decode_json($r->{content});
    return (grep { $_->{sku} eq $sku } @{$page->{results}}) ? 1 : 0;
}

sub find {
    my ($base, $file) = @_;
    open(my $fh, '<', $file) or die "$file: $!\n";
    while (<$fh>) {
        chomp;
        my ($sku, $stock, $name) = split /\t/;
        # every word of the name (brand, series, part, number), and an offer
        # filter: out of stock, the product is excluded, not listed last
        my $path = '/v1/search?q=' . join('+', map { esc(lc) } split / /, $name)
            . '&max_price=1000000&limit=50';
        if (listed("$base$path", $sku)) {
            print "$sku\t$stock\t$path\n";
            return 0;
        }
    }
    return 1;
}

sub post {
    my ($url, $key, $body, $extra) = @_;
    my $r = $http->post($url, {
        headers => {'Authorization' => "Bearer $key", 'Content-Type' => 'application/json',
                    'Service-Agent' => 'agentshop-bench/1.0', %{$extra // {}}},
        content => encode_json($body)});
    return ($r->{status}, $r->{content});
}

sub watch {
    my ($base, $key, $sku, $stock, $path, $log, $tag, $children, @polls) = @_;
    my @children = split ' ', $children;
    for my $base (@polls) {
        die "fresh: $base$path does not list $sku before the change\n" unless listed("$base$path", $sku);
    }
    # Rounds of 2 s, four pollers at once, each on two connections or more
    # to each base that it opens (with a first search) before the order and
    # keeps alive, until every child of every base has answered and its
    # last answer showed the change; 10 s at most. A connection stays with
    # the child that accepted it: with new connections, a child busy with
    # the load accepts few (the other child's listener takes them first),
    # and a child not asked for a second says nothing of when it had the
    # change; so each poller opens connections until they reach every child
    # (the access log says which child answered each one's first search).
    # The first round's pollers have their connections before the order and
    # wait for its time: they start asking as soon as it is placed.
    my @kids = pollers($tag, 2, $path, $sku, $log, \@children, @polls);
    my ($st, $body) = post("$base/v1/quotes", $key, {sku => $sku, quantity => $stock + 0});
    die "fresh: POST /quotes: $st $body\n" unless $st == 201;
    my $quote = decode_json($body)->{id};
    my $t_order = time;
    ($st, $body) = post("$base/v1/orders", $key,
        {quote_id => $quote, reason => 'Benchmark: the last units, to see search change.'},
        {'Idempotency-Key' => "$tag-order"});
    die "fresh: POST /orders: $st $body\n" unless $st == 201;
    my $t0 = time;
    printf "order: %d units of %s, the last of its offer in stock, placed (201) in %.1f ms\n",
        $stock, $sku, 1000 * ($t0 - $t_order);

    my (@answers, %srv); # answers: [tag, base, ms after the 201, changed, ms it took];
                         # srv: tag => [pid, ms after the 201 it began, ms it took] (the log's)
    my $round_end = 2;
    while (1) {
        print {$_->[1]} "$t0\n" for @kids; # go
        close $_->[1] for @kids;
        for my $kid (@kids) {
            my $out = $kid->[0];
            push @answers, map { chomp; [split / /] } <$out>;
            close $out or die "fresh: a poller failed\n";
        }
        sleep 0.3; # the last requests' log lines
        open(my $fh, '<', $log) or die "$log: $!\n";
        while (<$fh>) { # ... %Dus %P %{begin:usec}t %{X-Bench-Poll}i
            $srv{$4} = [$2, $3 / 1000 - 1000 * $t0, $1 / 1000] if / (\d+)us (\d+) (\d+) (\Q$tag\E-\d+-\d+)$/;
        }
        close $fh;
        last if $round_end >= 10 || all_new(\@answers, \%srv, \@polls, \@children);
        $round_end += 2;
        @kids = pollers($tag, $round_end, $path, $sku, $log, \@children, @polls);
    }
    report(\@answers, \%srv, \@polls, \@children, $round_end);
    return 0;
}

# Per base and child, by the time each request began in the child (the
# access log's): the last answer without the change, and the first after it
# with it. The change was there for good in that child by the time that
# answer ended, and missing when the last one without it began. The verdict
# on "every child within 1 s": met when every child's first answer for good
# ended within 1 s of the order; MISSED when an answer without the change
# began 1 s or more after it; otherwise unknown (no child was asked in time).
sub report {
    my ($answers, $srv, $polls, $children, $secs) = @_;
    my (%of, $unlogged);
    for my $x (@$answers) {
        my $s = $srv->{$x->[0]};
        if ($s) { push @{$of{"$x->[1] $s->[0]"}}, [$s->[1], $s->[1] + $s->[2], $x->[3]] }
        else { $unlogged++ }
    }
    my ($known, $stale, $never) = (0, -1, 0);
    for my $base (@$polls) {
        for my $p (@$children) {
            my @l = sort { $a->[0] <=> $b->[0] } @{$of{"$base $p"} // []};
            my ($old, $new);
            for my $x (@l) {
                if (!$x->[2]) { $old = $x; $new = undef }
                elsif (!$new) { $new = $x }
            }
            printf "  %s child %s: %d answers; %s; %s\n", $base, $p, scalar @l,
                $old ? sprintf('the last without the change began at %.0f ms', $old->[0])
                     : 'every one with the change',
                $new ? sprintf('with it for good from the one begun at %.0f ms, answered at %.0f ms', @$new[0, 1])
                     : 'NEVER with it';
            $stale = $old->[0] if $old && $old->[0] > $stale;
            if ($new) { $known = $new->[1] if $new->[1] > $known } else { $never++ }
        }
    }
    my @took = sort { $a <=> $b } map { $_->[4] } @$answers;
    printf "  %d answers in %d s, on at least %d connections per base opened before the order (a\n"
        . "  round's first search; more until they reach every child) and kept alive; one took\n"
        . "  %.0f ms at the median, %.0f ms at most (from the poller's sending to its reading the\n"
        . "  answer)\n",
        scalar @$answers, $secs, POLLERS * CONNS, $took[$#took / 2], $took[-1];
    printf "  %d answers not found in the access log\n", $unlogged if $unlogged;
    printf "fresh_ms %s\n", $never ? 'none' : sprintf('%.0f', $known);
    printf "fresh_stale_ms %s\n", $stale < 0 ? '-' : sprintf('%.0f', $stale);
    printf "fresh_verdict %s\n", !$never && $known < 1000 ? 'met' : $stale >= 1000 ? 'MISSED' : 'unknown';
}

# The child (pid) that answered the request tagged TAG, from the lines the
# access log LOG (a handle, read on from where it was) has gained; undef when
# none in half a second. Lines of other tags are passed over.
sub served_by {
    my ($log, $tag) = @_;
    for (1 .. 50) {
        while (my $line = <$log>) {
            return $1 if $line =~ / \d+us (\d+) \d+ \Q$tag\E$/;
        }
        seek($log, 0, 1); # clear EOF, to read what is written next
        sleep 0.01;
    }
    return undef;
}

# The pollers of a round, each with its connections open (CONNS to each base,
# made by a first search, tagged TAG-R-0..., not counted as an answer) and
# waiting for the time of the order on a pipe: [its answers (a pipe from it),
# the pipe to give it the time]. Returns when every poller has its
# connections. A connection stays with the child that accepted it, and
# under load one child may accept every new one for seconds: a poller opens
# more (up to CONN_TRIES to a base) until the access log LOG says that its
# connections reach every child of CHILDREN, so each child is asked.
use constant CONN_TRIES => 16;
sub pollers {
    my ($tag, $round_end, $path, $sku, $log, $children, @polls) = @_;
    my @kids;
    for my $k (1 .. POLLERS) {
        pipe(my $go_r, my $go_w) or die "pipe: $!\n";
        my $pid = open(my $out, '-|') // die "fork: $!\n";
        if (!$pid) {
            close $go_w;
            $| = 1;
            open(my $lf, '<', $log) or die "$log: $!\n";
            seek($lf, 0, 2); # from now on
            my %ua;
            for my $i (0 .. $#polls) {
                my $base = $polls[$i];
                my %reached;
                for (my $j = 0; $j < CONN_TRIES; $j++) {
                    last if $j >= CONNS && !grep { !$reached{$_} } @$children;
                    my $ua = HTTP::Tiny->new(keep_alive => 1, timeout => 30,
                                             agent => 'agentshop-bench/1.0');
                    my $t = "$tag-" . ($round_end * 10 + $k) . sprintf('-0%d%02d', $i, $j);
                    listed("$base$path", $sku, {'X-Bench-Poll' => $t}, $ua);
                    my $child = served_by($lf, $t);
                    next if $j >= CONNS && defined $child && $reached{$child}; # one more to the same child
                    $reached{$child} = 1 if defined $child;
                    push @{$ua{$base}}, $ua;
                }
            }
            close $lf;
            print "ready\n";
            my $t0 = <$go_r>;
            close $go_r;
            poll($tag, $k, $round_end, $t0 + 0, \%ua, $path, $sku, @polls);
            exit 0;
        }
        close $go_r;
        $go_w->autoflush(1);
        push @kids, [$out, $go_w];
    }
    for my $kid (@kids) {
        my $out = $kid->[0];
        my $line = <$out> // '';
        die "fresh: a poller could not search before the order\n" unless $line eq "ready\n";
    }
    return @kids;
}

# One poller: PATH on the bases in turn, each time on the next of the
# poller's own connections to it (UA: base => [HTTP::Tiny...]), until
# ROUND_END s after T0; prints "tag base ms changed ms-it-took" per answer.
sub poll {
    my ($tag, $k, $round_end, $t0, $ua, $path, $sku, @polls) = @_;
    my $n = 0;
    while (time - $t0 < $round_end) {
        my $base = $polls[($n + $k) % @polls];
        $n++;
        my $t = "$tag-" . ($round_end * 10 + $k) . "-$n";
        my $sent = time;
        my $conns = $ua->{$base};
        my $changed =
            listed("$base$path", $sku, {'X-Bench-Poll' => $t}, $conns->[int($n / @polls) % @$conns])
            ? 0 : 1;
        printf "%s %s %.1f %d %.1f\n", $t, $base, 1000 * (time - $t0), $changed, 1000 * (time - $sent);
    }
}

# 1 when every child has answered on every base, its last answer with the change.
sub all_new {
    my ($answers, $srv, $polls, $children) = @_;
    my (%last, %when);
    for my $x (@$answers) {
        my $s = $srv->{$x->[0]} or next;
        my $c = "$x->[1] $s->[0]";
        next if defined $when{$c} && $when{$c} > $s->[1];
        ($when{$c}, $last{$c}) = ($s->[1], $x->[3]);
    }
    for my $base (@$polls) {
        for my $p (@$children) {
            return 0 unless $last{"$base $p"};
        }
    }
    return 1;
}

my $cmd = shift // '';
if ($cmd eq 'find' && @ARGV == 2) { exit find(@ARGV) }
if ($cmd eq 'watch' && @ARGV >= 9) { exit watch(@ARGV) }
die "usage: $0 find BASE CANDIDATES | watch BASE KEY SKU STOCK PATH ACCESS_LOG TAG CHILDREN POLL_BASE...\n";
