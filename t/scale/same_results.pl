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
# What "the same" means: the whole response bodies are byte for byte equal,
# with or without q. Search is one engine in core (core/search/) over an index
# built from either database, and every order is fully determined (match tier,
# buyable, sort key, score, then sku), so nothing may differ; a difference is
# reported with the path of the first differing field. Result sets of up to
# 1,000 are also fetched whole, page by page, and compared the same way.
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
    my $count = ref $a->{body} eq 'HASH' ? $a->{body}{count} : undef;
    my $how = 'whole body';
    push @problems, same_body($a, $b) unless @problems;
    if (!@problems && $path =~ m{^/search\?} && $a->{status} == 200 && defined $count
        && ($a->{body}{offset} // 0) == 0
        && $count > @{ $a->{body}{results} || [] } && $count <= $PAGE_ALL_UP_TO) {
        # fetch the whole result set, 100 at a time, and compare every page
        my ($p, $query) = split /\?/, $path, 2;
        my $base = join '&', grep { !/^(limit|offset)=/ } split /&/, $query;
        my $n = 0;
        for (my $off = 0; $off < $count && !@problems; $off += 100) {
            my ($pa, $pb) = pair("$p?$base&limit=100&offset=$off");
            $ms_a += $pa->{ms};
            $ms_b += $pb->{ms};
            push @problems, same_body($pa, $pb);
            $n += @{ ref $pa->{body} eq 'HASH' && $pa->{body}{results} || [] };
        }
        push @problems, "paging gave $n results, count says $count" if !@problems && $n != $count;
        $how = "all $n results, page by page";
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
# the deepest page served: offset + limit at most 1000 (docs/search.md); past it 400
check('/search?limit=100&offset=900');
check('/search?category=chargers-cables&sort=delivery&limit=100&offset=900');
check('/search?sort=return_rate&limit=100&offset=900');
check('/search?limit=100&offset=5000', status => 400, field => 'offset');
check('/search?sort=return_rate&limit=100&offset=100000', status => 400, field => 'offset');
check('/search?excluded_count=1', status => 400, field => 'excluded_count');

# a device: every product with compatibility data for it is read and ranked
check("/search?device=$device{printer}");
check("/search?device=$device{printer}&sort=price&limit=100");
check("/search?device=$device{vacuum}&part_type=filter", min_excluded => 1);
check("/search?device=$device{vacuum}&verified_only=false&sort=delivery");
check("/search?device=$device{printer}&weights=price:1");
check("/search?device=$device{printer}&max_price=20", min_excluded => 1);
check("/search?device=$device{coffee}&weights=price:1&max_price=20&sort=price");

# custom weights or offer filters over every product: answered, never refused
check('/search?weights=price:1');
check('/search?max_price=20', min_excluded => 1);
check('/search?category=vacuum-parts&max_price=20&sort=price');
check('/search?deliver_by=2099-01-01&weights=delivery:1&limit=100&offset=900');

# ---- with q ----
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
check('/search?q=toner+78&sort=return_rate');                # a number (exact, or dropped)
check('/search?q=catalogue&limit=100&offset=900');           # a description word, deep
check('/search?q=aldermoor&limit=100&offset=900');
check('/search?q=zzzz', min => 0, max => 0);
check('/search?q=aldermoor&weights=price:1');
check('/search?q=aldermoor&max_price=20', min_excluded => 1);
check('/search?q=hand+wash+marlow&max_price=6&sort=price', min_excluded => 1);
check("/search?q=descaler&device=$device{coffee}");
check('/search?q=toner&weights=price:1');
check('/search?q=tonner+aldermoor');                         # a typo, corrected
check('/search?q=cheap+aldermoor+toner+under+20+euros');      # a price in the text

# Accents and case in q are ignored: the engine folds the query's words as it
# folds the catalogue's, whichever database the catalogue came from.
check('/search?q=ald%C3%A9rmoor', min => 100);
check('/search?q=%C3%81LDERMOOR&category=vacuum-parts', min => 100);

note(sprintf 'total request time: sqlite %.1f s, pgsql %.1f s', $total_ms{sqlite} / 1000,
     $total_ms{pgsql} / 1000);
done_testing();
