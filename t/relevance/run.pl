#!/usr/bin/perl
# The relevance set (t/relevance/queries.json, judged by hand) against a
# running server: zero-result rate, recall@10 and MRR, compared with the
# figures recorded in t/relevance/baseline.json. docs/search.md says how.
#
#   perl t/relevance/run.pl [BASE] [--record]     BASE: http://127.0.0.1:8080/v1
#
# Exit 1 when a figure is worse than recorded (or a query fails); --record
# rewrites baseline.json with today's figures. t/api/relevance.t loads this
# file and runs the same measurement against the suite's server.
package AgentShop::Relevance;
use strict;
use warnings;
use File::Basename qw(dirname);
use File::Spec;
use JSON::PP;

my $DIR = dirname(File::Spec->rel2abs(__FILE__));
our $QUERIES  = "$DIR/queries.json";
our $BASELINE = "$DIR/baseline.json";
# A figure may move this much (rounding to 4 decimals) before it counts.
our $SLACK = 0.0001;
# name, what "worse" means (+1: higher is better), how it prints
our @FIGURES = (
    [ zero_result_rate => -1, 'zero-result rate' ],
    [ recall_at_10     => 1,  'recall@10' ],
    [ mrr              => 1,  'MRR' ],
);

my $JSON = JSON::PP->new->utf8->canonical;

sub read_json {
    my ($file) = @_;
    open my $fh, '<', $file or die "cannot read $file: $!\n";
    local $/;
    return $JSON->decode(<$fh>);
}

sub queries { read_json($QUERIES) }
sub baseline { read_json($BASELINE) }

sub escape {
    my ($s) = @_;
    utf8::encode($s);
    $s =~ s/([^A-Za-z0-9\-._~])/sprintf('%%%02X', ord $1)/ge;
    return $s;
}

# The path below the API base for one query. verified_only=false: the set
# judges matching and ranking; withholding contradicted products is a policy
# measured elsewhere (t/api/search.t).
sub path_of {
    my ($query) = @_;
    my %p = (verified_only => 'false', %{ $query->{params} // {} }, q => $query->{q}, limit => 10);
    return '/search?' . join('&', map { "$_=" . escape($p{$_}) } sort keys %p);
}

# One query's outcome from the number of matches and the SKUs returned, best first.
sub judge {
    my ($query, $total, @skus) = @_;
    my %rel = map { $_ => 1 } @{ $query->{relevant} };
    my @top = @skus > 10 ? @skus[ 0 .. 9 ] : @skus;
    my ($rank) = grep { $rel{ $top[ $_ - 1 ] } } 1 .. @top;
    my $hits = grep { $rel{$_} } @top;
    my $want = keys %rel < 10 ? scalar keys %rel : 10;
    return {
        q       => $query->{q},
        params  => $query->{params},
        answer  => $want > 0,
        count   => $total // scalar @skus,
        top     => \@top,
        rank    => $rank,
        recall  => $want ? $hits / $want : undef,
        rr      => $rank ? 1 / $rank : 0,
    };
}

# measure($get): $get->($path) returns (error-or-undef, decoded body).
# Returns ({figures}, [outcomes], [errors]).
sub measure {
    my ($get) = @_;
    my (@out, @errors);
    for my $query (@{ queries() }) {
        my ($err, $body) = $get->(path_of($query));
        if ($err) {
            push @errors, "$query->{q}: $err";
            push @out, judge($query, 0);
            next;
        }
        push @out, judge($query, $body->{count}, map { $_->{sku} } @{ $body->{results} // [] });
    }
    my @ans = grep { $_->{answer} } @out;
    my $n = @ans || 1;
    my %fig = (
        zero_result_rate => (grep { $_->{count} == 0 } @ans) / $n,
        recall_at_10     => sum(map { $_->{recall} } @ans) / $n,
        mrr              => sum(map { $_->{rr} } @ans) / $n,
    );
    return (\%fig, \@out, \@errors);
}

sub sum { my $s = 0; $s += $_ for @_; $s }

sub describe {
    my ($o) = @_;
    my $params = join '', map { " $_=$o->{params}{$_}" } sort keys %{ $o->{params} // {} };
    my $q = "\"$o->{q}\"$params";
    my $top = join ' ', @{ $o->{top} }[ 0 .. ($#{ $o->{top} } < 2 ? $#{ $o->{top} } : 2) ];
    return sprintf('%-5s %-44s %d results, no answer in the catalogue%s',
                   'none', $q, $o->{count}, $o->{count} ? " (top: $top)" : '')
      unless $o->{answer};
    my $tag = $o->{count} == 0 ? 'ZERO' : !$o->{rank} ? 'MISS' : $o->{recall} < 1 ? 'part' : 'ok';
    return sprintf('%-5s %-44s %2d results, first relevant %s, recall@10 %.2f%s',
                   $tag, $q, $o->{count}, $o->{rank} ? "at $o->{rank}" : 'none', $o->{recall},
                   $tag eq 'ok' || $tag eq 'ZERO' ? '' : " (top: $top)");
}

# [[figure, value, recorded, verdict]] with verdict 'worse', 'better' or 'same'.
sub compare {
    my ($fig, $base) = @_;
    my @rows;
    for my $f (@FIGURES) {
        my ($name, $dir) = @$f;
        my $was = $base->{$name};
        my $d = defined $was ? $dir * ($fig->{$name} - $was) : -1;
        push @rows, [ $f, $fig->{$name}, $was, $d < -$SLACK ? 'worse' : $d > $SLACK ? 'better' : 'same' ];
    }
    return @rows;
}

sub record {
    my ($fig) = @_;
    open my $fh, '>', $BASELINE or die "cannot write $BASELINE: $!\n";
    print $fh "{\n", join(",\n", map { sprintf('  "%s": %.4f', $_->[0], $fig->{ $_->[0] }) } @FIGURES), "\n}\n";
    close $fh or die "cannot write $BASELINE: $!\n";
}

sub lwp_getter {
    my ($base) = @_;
    require LWP::UserAgent;
    my $ua = LWP::UserAgent->new(timeout => 30);
    return sub {
        my $res = $ua->get($base . $_[0]);
        # make run allows 600 requests a minute per client: wait as told.
        for (my $try = 0; $res->code == 429 && $try < 3; $try++) {
            my $wait = $res->header('Retry-After') // 1;
            $wait = 60 if $wait !~ /^\d+$/ || $wait > 60;
            print STDERR "rate limited: waiting $wait s as Retry-After says\n";
            sleep $wait;
            $res = $ua->get($base . $_[0]);
        }
        return ('HTTP ' . $res->status_line) unless $res->code == 200;
        my $body = eval { $JSON->decode($res->content) };
        return ($body ? undef : 'not JSON', $body);
    };
}

sub main {
    my @args = @_;
    my $record = grep { $_ eq '--record' } @args;
    my ($base) = grep { $_ ne '--record' } @args;
    $base //= $ENV{AGENTSHOP_BASE} // 'http://127.0.0.1:8080/v1';
    $base =~ s{/+$}{};
    my ($fig, $out, $errors) = measure(lwp_getter($base));
    print describe($_), "\n" for @$out;
    my @ans = grep { $_->{answer} } @$out;
    printf "%d queries, %d with an answer in the catalogue\n", scalar @$out, scalar @ans;
    if (@$errors) {
        print "error: $_\n" for @$errors;
        print "relevance: 0 passed, 3 failed\n";
        return 1;
    }
    if ($record) {
        record($fig);
        printf "recorded in %s: %s\n", $BASELINE,
          join(', ', map { sprintf('%s %.4f', $_->[2], $fig->{ $_->[0] }) } @FIGURES);
        return 0;
    }
    my $base_fig = eval { baseline() } // {};
    my ($pass, $fail, $better) = (0, 0, 0);
    for my $row (compare($fig, $base_fig)) {
        my ($f, $now, $was, $verdict) = @$row;
        printf "%-17s %.4f (recorded %s)%s\n", $f->[2], $now, defined $was ? sprintf('%.4f', $was) : 'none',
          $verdict eq 'worse' ? ' WORSE' : $verdict eq 'better' ? ' better' : '';
        $verdict eq 'worse' ? $fail++ : $pass++;
        $better++ if $verdict eq 'better';
    }
    print "better than recorded: record with `perl t/relevance/run.pl $base --record` and commit baseline.json\n"
      if $better;
    print "relevance: $pass passed, $fail failed\n";
    return $fail ? 1 : 0;
}

exit main(@ARGV) unless caller;
1;
