#!/usr/bin/perl
# Search gives the same results on SQLite and on PostgreSQL: the same queries
# to two mod_agentshop servers over the same generated catalogue (agentshopctl
# catalogue generate, same size and seed), one per backend. Run by
# scripts/test-scale.sh (make test-scale); by hand:
#
#   perl t/scale/same_results.pl http://127.0.0.1:8651/v1 http://127.0.0.1:8652/v1
#
# (the SQLite server first). Core Perl modules only.
#
# What "the same" means:
# - Without q, the whole response bodies are byte for byte equal: every order
#   is fully determined (sort key, score, then sku), and the numbers are the
#   same text. A difference is reported with the path of the first differing
#   field.
# - With q, text relevance (SQLite FTS5 bm25, PostgreSQL ts_rank) breaks ties
#   between results with the same sort key and score, before the sku. The two
#   rankings are different functions, so inside a tie group the order of skus
#   may legitimately differ. Everything else must agree: the status, count,
#   excluded_count, the whole excluded list and every other top-level field;
#   position by position, the sort key (whether the product can be bought, the
#   sort's own field, the best offer's score); the summary of every sku both
#   return; and the skus of every tie group wholly inside what was fetched, as
#   a set. Result sets of up to 1,000 are fetched whole, page by page, so for
#   them the skus are compared as a set and every group is complete.
use strict;
use warnings;
use HTTP::Tiny;
use JSON::PP;
use Test::More;
use Time::HiRes qw(time);

@ARGV == 2 or die "usage: $0 SQLITE_BASE_URL PGSQL_BASE_URL  (e.g. http://127.0.0.1:8651/v1)\n";
my ($SQLITE, $PGSQL) = @ARGV;
s{/+$}{} for $SQLITE, $PGSQL;

my $http = HTTP::Tiny->new(timeout => 600, agent => 'agentshop-scale-test/1.0');
my $json = JSON::PP->new->canonical->allow_nonref;
my %total_ms = (sqlite => 0, pgsql => 0);
my $PAGE_ALL_UP_TO = 1000;

# Fields compared after rounding, should the backends ever differ in a float's
# last digit (field name => decimals). Empty: none needed so far.
my %ROUND = ();

sub get1 {
    my ($base, $path) = @_;
    my $t0 = time;
    my $r = $http->get($base . $path);
    my $ms = 1000 * (time - $t0);
    my $body = eval { $json->decode($r->{content}) };
    return {status => $r->{status}, raw => $r->{content}, body => $body, ms => $ms,
            date => substr($r->{headers}{date} // '', 0, 16)};
}

# The same request to both; again if the day (delivery_by dates) changed in between.
sub pair {
    my ($path) = @_;
    my ($a, $b);
    for my $try (1, 2) {
        $a = get1($SQLITE, $path);
        $b = get1($PGSQL, $path);
        last if $a->{date} eq $b->{date};
    }
    $total_ms{sqlite} += $a->{ms};
    $total_ms{pgsql} += $b->{ms};
    return ($a, $b);
}

sub show {
    my ($v) = @_;
    my $s = defined $v ? (ref $v ? $json->encode($v) : "$v") : 'null';
    return length $s > 160 ? substr($s, 0, 160) . '...' : $s;
}

# The path of the first difference between two decoded JSON values, or undef.
sub first_diff {
    my ($x, $y, $at, $key) = @_;
    $at //= '';
    if (ref $x eq 'HASH' && ref $y eq 'HASH') {
        my %k = map { $_ => 1 } keys %$x, keys %$y;
        for my $k (sort keys %k) {
            return "$at.$k: only in " . (exists $x->{$k} ? 'sqlite' : 'pgsql')
                unless exists $x->{$k} && exists $y->{$k};
            my $d = first_diff($x->{$k}, $y->{$k}, "$at.$k", $k);
            return $d if defined $d;
        }
        return undef;
    }
    if (ref $x eq 'ARRAY' && ref $y eq 'ARRAY') {
        for my $i (0 .. ($#$x < $#$y ? $#$x : $#$y)) {
            my $d = first_diff($x->[$i], $y->[$i], "$at\[$i]", $key);
            return $d if defined $d;
        }
        return @$x == @$y ? undef : "$at: sqlite has " . @$x . " items, pgsql " . @$y;
    }
    my ($sx, $sy) = (show($x), show($y));
    if (defined $key && exists $ROUND{$key} && defined $x && defined $y && !ref $x && !ref $y) {
        ($sx, $sy) = map { sprintf '%.*f', $ROUND{$key}, $_ } $x, $y;
    }
    return $sx eq $sy && ref $x eq ref $y ? undef : "$at: sqlite $sx, pgsql $sy";
}

# Where two JSON texts first differ, when their decoded values do not (a float
# that differs beyond the digits Perl keeps): the token and what precedes it.
sub text_diff {
    my ($x, $y) = @_;
    my @a = split /([{}\[\],:])/, $x;
    my @b = split /([{}\[\],:])/, $y;
    my $before = '';
    for my $i (0 .. $#a) {
        return "after ...$before: sqlite $a[$i], pgsql " . ($b[$i] // '(end)')
            if !defined $b[$i] || $a[$i] ne $b[$i];
        $before = substr($before . $a[$i], -80);
    }
    return "pgsql's body is longer";
}

sub same_body {
    my ($a, $b) = @_;
    return () if $a->{raw} eq $b->{raw};
    return ('a body is not JSON: sqlite ' . show($a->{raw}) . ', pgsql ' . show($b->{raw}))
        unless defined $a->{body} && defined $b->{body};
    my $d = first_diff($a->{body}, $b->{body});
    return ("bodies differ at $d") if defined $d;
    return () if %ROUND; # equal once the named fields are rounded
    return ('bodies differ in the text of a number: ' . text_diff($a->{raw}, $b->{raw}));
}

# What a result is ordered by: whether it can be bought, the sort's own key, and
# the best offer's score (hit_cmp in core/as_catalog_api.c); then relevance, sku.
sub sort_key {
    my ($r, $sort) = @_;
    my $o = $r->{best_offer};
    my $key = !$o                   ? 0
            : $sort eq 'price'      ? $o->{price_cents}
            : $sort eq 'delivery'   ? $o->{delivery_days}
            : $sort eq 'score'      ? -$o->{score}
            : 0;
    $key = $r->{return_rate} if $sort eq 'return_rate';
    return join '/', ($o ? 1 : 0), $key, ($o ? $o->{score} : 0);
}

# Compares two result lists that may order skus differently inside tie groups.
# $first_whole / $last_whole: the first / last group is known to be complete
# (the list starts at offset 0 / reaches the end of the results).
sub compare_results {
    my ($sort, $ra, $rb, $first_whole, $last_whole, $stats) = @_;
    my @p;
    push @p, 'results: sqlite has ' . @$ra . ', pgsql ' . @$rb if @$ra != @$rb;
    my $n = @$ra < @$rb ? scalar @$ra : scalar @$rb;
    my @key;
    for my $i (0 .. $n - 1) {
        my ($ka, $kb) = (sort_key($ra->[$i], $sort), sort_key($rb->[$i], $sort));
        push @p, "results[$i] sort key (buyable/$sort/score): sqlite $ka ($ra->[$i]{sku}), "
               . "pgsql $kb ($rb->[$i]{sku})" if $ka ne $kb;
        push @key, $ka;
    }
    return @p if @p; # groups only make sense once the keys agree
    # every sku once
    for ([sqlite => $ra], [pgsql => $rb]) {
        my %seen;
        my @dup = grep { $seen{$_->{sku}}++ } @{$_->[1]};
        push @p, "$_->[0] returns " . join(', ', map { $_->{sku} } @dup[0 .. ($#dup < 4 ? $#dup : 4)])
               . ' twice' if @dup;
    }
    # tie groups: runs of equal keys
    my $i = 0;
    while ($i < $n) {
        my $j = $i;
        $j++ while $j < $n && $key[$j] eq $key[$i];
        my $whole = ($i > 0 || $first_whole) && ($j < $n || $last_whole);
        if ($whole) {
            my %a = map { $ra->[$_]{sku} => 1 } $i .. $j - 1;
            my %b = map { $rb->[$_]{sku} => 1 } $i .. $j - 1;
            my @only_a = sort grep { !$b{$_} } keys %a;
            my @only_b = sort grep { !$a{$_} } keys %b;
            push @p, "tie group results[$i..@{[$j - 1]}] (key $key[$i]): only sqlite has "
                   . show(\@only_a) . ', only pgsql has ' . show(\@only_b) if @only_a || @only_b;
            $stats->{grouped} += $j - $i;
        }
        $stats->{groups}++;
        $i = $j;
    }
    # the same summary for every sku both return
    my %b = map { $_->{sku} => $_ } @$rb;
    for my $r (@$ra) {
        next unless $b{$r->{sku}};
        $stats->{summaries}++;
        my $d = first_diff($r, $b{$r->{sku}}, "results[sku=$r->{sku}]");
        push @p, $d if defined $d;
    }
    return @p;
}

sub without_results {
    my ($body) = @_;
    my %c = %$body;
    delete $c{results};
    return \%c;
}

sub param {
    my ($path, $name) = @_;
    return $path =~ /[?&]\Q$name\E=([^&]*)/ ? $1 : undef;
}

# One query: fetch both, compare, check the expectation, one summary line.
sub check {
    my ($path, %expect) = @_;
    my $status = $expect{status} // 200;
    my ($a, $b) = pair($path);
    my ($ms_a, $ms_b) = ($a->{ms}, $b->{ms});
    my @problems;
    push @problems, "status: sqlite $a->{status}, pgsql $b->{status}" if $a->{status} != $b->{status};
    my $has_q = $path =~ m{^/search\?} && defined param($path, 'q');
    my $count = ref $a->{body} eq 'HASH' ? $a->{body}{count} : undef;
    my %stats = (groups => 0, grouped => 0, summaries => 0);
    my $how = 'whole body';
    if (@problems) {
    } elsif (!$has_q || $a->{status} != 200 || !defined $count) {
        push @problems, same_body($a, $b);
    } else {
        # q: everything but the order inside tie groups
        my ($ba, $bb) = ($a->{body}, $b->{body});
        my $d = first_diff(without_results($ba), without_results($bb));
        push @problems, $d if defined $d;
        my $sort = $ba->{sort};
        my $offset = $ba->{offset};
        my ($ra, $rb) = ([@{$ba->{results}}], [@{$bb->{results}}]);
        my $last_whole = $offset + @$ra >= $count;
        if (!@problems && !$last_whole && $offset == 0 && $count <= $PAGE_ALL_UP_TO) {
            # fetch the whole result set, 100 at a time
            my ($p, $query) = split /\?/, $path, 2;
            my $base = join '&', grep { !/^(limit|offset)=/ } split /&/, $query;
            $base = "$p?$base&";
            ($ra, $rb) = ([], []);
            for (my $off = 0; $off < $count; $off += 100) {
                my ($pa, $pb) = pair("${base}limit=100&offset=$off");
                $ms_a += $pa->{ms};
                $ms_b += $pb->{ms};
                if ($pa->{status} != 200 || $pb->{status} != 200) {
                    push @problems, "page at offset $off: sqlite $pa->{status}, pgsql $pb->{status}";
                    last;
                }
                push @$ra, @{$pa->{body}{results}};
                push @$rb, @{$pb->{body}{results}};
            }
            $last_whole = 1;
            $how = 'all ' . @$ra . ' results';
            push @problems, "paging gave sqlite " . @$ra . " results and pgsql " . @$rb
                          . ", count says $count" if !@problems && (@$ra != $count || @$rb != $count);
        } else {
            $how = 'page of ' . @$ra;
        }
        push @problems, compare_results($sort, $ra, $rb, $offset == 0, $last_whole, \%stats)
            unless @problems;
        $how .= ", $stats{groups} tie groups, $stats{grouped} skus in whole groups, "
              . "$stats{summaries} summaries compared";
    }
    my $label = "same answer: GET $path";
    ok(!@problems, $label) or diag(join "\n", @problems[0 .. ($#problems < 9 ? $#problems : 9)]);

    # not vacuous: the answer is the one this query is meant to produce
    my @why;
    push @why, "status $a->{status}, expected $status" if $a->{status} != $status;
    if ($status == 200 && defined $count) {
        my ($min, $max) = ($expect{min} // 1, $expect{max});
        push @why, "count $count, expected at least $min" if $count < $min;
        push @why, "count $count, expected at most $max" if defined $max && $count > $max;
        my $offset = $a->{body}{offset} // 0;
        push @why, "no results on a page inside the count"
            if ref $a->{body}{results} eq 'ARRAY' && $count > $offset && !@{$a->{body}{results}};
        push @why, "excluded_count $a->{body}{excluded_count}, expected at least $expect{min_excluded}"
            if defined $expect{min_excluded} && $a->{body}{excluded_count} < $expect{min_excluded};
    } elsif ($status == 200) {
        push @why, 'no count in the body';
    }
    if ($status != 200) {
        my $field = ref $a->{body} eq 'HASH' ? $a->{body}{field} // 'null' : 'null';
        push @why, "error field $field, expected $expect{field}"
            if defined $expect{field} && $field ne $expect{field};
    }
    ok(!@why, "expected answer: GET $path") or diag(join "\n", @why);
    note(sprintf '%-3d count=%-7s sqlite %7.1f ms  pgsql %7.1f ms  %s  (%s)', $a->{status},
         $count // '-', $ms_a, $ms_b, $path, $how);
    return $a->{body};
}

# ---- devices: both servers list the same, and give the slugs used below ----
# The generator gives each part compatibility with devices of its kind numbered
# from 1 to about 490 (of 500): take the lowest-numbered candidate, which has some.
my %device;
for my $kind (qw(printer vacuum coffee)) {
    my $body = check("/devices?q=$kind&limit=100", min => 8);
    my @slugs = map { $_->{slug} } @{ref $body eq 'HASH' && $body->{candidates} || []};
    my ($low) = sort { ($a =~ /(\d+)$/)[0] <=> ($b =~ /(\d+)$/)[0] } grep { /\d$/ } @slugs;
    $device{$kind} = $low // 'none';
}

my @categories = qw(hand-soap air-filters vacuum-parts coffee-kitchen printer-ink
                    chargers-cables batteries);
my @part_types = qw(filter dust-bag battery descaler jug-filter toner ink-cartridge cell charger);

# ---- without q: whole bodies ----
check('/search');
check("/search?category=$_") for @categories;
check("/search?part_type=$_") for @part_types;
check('/search?category=vacuum-parts&part_type=filter');
check('/search?category=coffee-kitchen&part_type=filter');
check('/search?category=batteries&part_type=battery&sort=price');
check('/search?category=printer-ink&part_type=descaler', min => 0, max => 0);
check("/search?sort=$_") for qw(score price delivery return_rate);
check('/search?category=printer-ink&sort=price');
check('/search?category=vacuum-parts&sort=delivery');
check('/search?category=hand-soap&sort=return_rate');
check('/search?category=air-filters&sort=score');
check('/search?verified_only=false', min_excluded => 0);
check('/search?verified_only=false&category=air-filters&sort=price');
check('/search?limit=100&offset=0');
check('/search?limit=100&offset=100');
check('/search?limit=100&offset=5000');
check('/search?category=chargers-cables&sort=delivery&limit=100&offset=5000');
check('/search?sort=return_rate&limit=100&offset=100000');
check('/search?excluded_count=1', status => 400, field => 'excluded_count');

# a device: every product with compatibility data for it is read and ranked
check("/search?device=$device{printer}");
check("/search?device=$device{printer}&sort=price&limit=100");
check("/search?device=$device{vacuum}&part_type=filter", min_excluded => 1);
check("/search?device=$device{vacuum}&verified_only=false&sort=delivery");
check("/search?device=$device{printer}&weights=price:1");
check("/search?device=$device{printer}&max_price=20", min_excluded => 1);
check("/search?device=$device{coffee}&weights=price:1&max_price=20&sort=price");

# custom weights or offer filters over more than 10,000 products: the same 400
check('/search?weights=price:1', status => 400, field => 'weights');
check('/search?max_price=20', status => 400, field => 'max_price');
check('/search?category=vacuum-parts&max_price=20', status => 400, field => 'max_price');

# ---- with q: text relevance may order ties differently ----
check('/search?q=aldermoor');
check('/search?q=Aldermoor&category=vacuum-parts');
check('/search?q=toner');
check('/search?q=toner&category=printer-ink&sort=price');
check('/search?q=dust+bags&sort=delivery');
check('/search?q=hepa&sort=price');
check('/search?q=wash&sort=return_rate&verified_only=false');
check('/search?q=aldermoor+toner', min => 100);              # fetched whole, page by page
check('/search?q=aldermoor+pro+toner&limit=100', min => 10); # one page holds them all
check('/search?q=brightvale+eco+descaler&sort=price');
check('/search?q=alder');                                    # a word prefix
check('/search?q=ALDERMOOR&part_type=battery');              # case
check('/search?q=usb-c&sort=delivery');
check('/search?q=toner+78&sort=return_rate');                # a number, as a prefix
check('/search?q=catalogue&limit=100&offset=5000');          # a description word, deep
check('/search?q=aldermoor&limit=100&offset=5000');
check('/search?q=zzzz', min => 0, max => 0);
check('/search?q=aldermoor&weights=price:1');
check('/search?q=aldermoor&max_price=20', min_excluded => 1);
check('/search?q=hand+wash+marlow&max_price=6&sort=price', min_excluded => 1);
check("/search?q=descaler&device=$device{coffee}");
check('/search?q=toner&weights=price:1', status => 400, field => 'weights');

# Accents and case in q: docs/api.md says both are ignored. Core folds the
# query's words (as_text_terms) as SQLite's FTS5 folds the catalogue text, so
# both backends must find these (PostgreSQL's 'simple' configuration would
# otherwise keep the accent, and find nothing). The generated catalogue has no
# accented words; docs/storage.md says what that means for catalogue text.
check('/search?q=ald%C3%A9rmoor', min => 100);
check('/search?q=%C3%81LDERMOOR&category=vacuum-parts', min => 100);

note(sprintf 'total request time: sqlite %.1f s, pgsql %.1f s', $total_ms{sqlite} / 1000,
     $total_ms{pgsql} / 1000);
done_testing();
