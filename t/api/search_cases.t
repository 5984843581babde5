# GET /v1/search against the cases of t/search-cases/*.tsv: one row a case,
# the search's parameters and the SKUs the demo catalogue (sql/demo/) says it
# must give, in order (or as a set), the SKUs it must exclude and the count.
# The rows are a specification written from the data (t/search-cases/README.md),
# not a record of what the engine answered: a mismatch names what differs.
# The cases are written against the demo catalogue as loaded, its stock
# included (whether an offer is in stock decides which offer is best), so they
# run on a database of their own, made by `agentshopctl init --demo`, served by
# an httpd of the test's own (AgentShop::OwnHttpd): the suite's scripts buy
# from and add to the shared one.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use File::Temp qw(tempdir);
use JSON::PP;
use LWP::UserAgent;
use AgentShop::Test;
use AgentShop::OwnHttpd;
use Apache::Test ();

plan skip_all => 'the httpd of this test uses SQLite (the suite runs on PostgreSQL)' if is_pg();
plan skip_all => 'runs as a user other than root (scripts/apache-test.sh)' if $> == 0;

my $dir = "$FindBin::Bin/../search-cases";
my @files = sort glob "$dir/*.tsv";
ok(@files, "case files in t/search-cases") or BAIL_OUT("no t/search-cases/*.tsv");

my $products = demo_data('products');
my %known = map { $_->{sku} => 1 } @$products;

my $top = Apache::Test::vars('serverroot') . '/..';
my $tmp = tempdir(CLEANUP => 1);
system("$top/bin/agentshopctl --params '$tmp/shop.db' --data '$top/sql/demo' init --demo >/dev/null")
  == 0 or BAIL_OUT('agentshopctl init --demo failed');
my ($rc, $log, $pid, $port) =
  start_httpd(dir => $tmp, name => 'cases', db => "$tmp/shop.db", top => $top);
ok(!defined $rc, 'an httpd serves the demo catalogue') or BAIL_OUT("httpd: $log");
END { stop_httpd($pid) if $pid }

my $ua = LWP::UserAgent->new(timeout => 60);
my $json = JSON::PP->new->utf8;
sub search {
    my ($query) = @_;
    my $res = $ua->get("http://127.0.0.1:$port/v1/search?$query");
    my $v = eval { $json->decode($res->content) };
    return ($res, $v);
}

# "A B C" in order, "{A B C}" as a set, "-" for none.
sub skus_of {
    my ($col) = @_;
    return ([], 0) if $col eq '-';
    my $set = $col =~ s/^\{(.*)\}$/$1/;
    return ([ split ' ', $col ], $set);
}

# What differs between the SKUs wanted and those given, in words.
sub differences {
    my ($what, $want, $got, $as_set) = @_;
    my %w = map { $_ => 1 } @$want;
    my %g = map { $_ => 1 } @$got;
    my @missing = grep { !$g{$_} } @$want;
    my @unexpected = grep { !$w{$_} } @$got;
    my @d;
    push @d, "$what missing: @missing" if @missing;
    push @d, "$what not expected: @unexpected" if @unexpected;
    push @d, "$what out of order:\n    want @$want\n    got  @$got"
        if !@d && !$as_set && "@$want" ne "@$got";
    return @d;
}

for my $file (@files) {
    (my $short = $file) =~ s{.*/}{};
    open my $fh, '<:encoding(UTF-8)', $file or die "$file: $!";
    while (my $line = <$fh>) {
        chomp $line;
        next if $line =~ /^\s*(#|$)/;
        my ($name, $query, $results, $excluded, $count) = split /\t/, $line, -1;
        if (!defined $count || $count !~ /^\d+$/) {
            fail("$short:$.: five tab-separated columns (case, query, results, excluded, count)");
            next;
        }
        $query =~ s/\{today\+(\d+)\}/today_plus($1)/ge;
        $query .= '&limit=100' unless $query =~ /(^|&)limit=/;
        my ($want, $as_set) = skus_of($results);
        my ($want_x) = skus_of($excluded);
        my @unknown = grep { !$known{$_} } @$want, @$want_x;
        my ($res, $v) = search($query);
        my @d;
        push @d, "SKUs not in the demo catalogue: @unknown" if @unknown;
        if ($res->code != 200 || !$v) {
            push @d, 'status ' . $res->code . ': ' . $res->content;
        } else {
            my @got = map { $_->{sku} } @{ $v->{results} };
            my @got_x = sort map { $_->{sku} } @{ $v->{excluded} };
            push @d, differences('results', $want, \@got, $as_set);
            push @d, differences('excluded', [ sort @$want_x ], \@got_x, 1);
            push @d, "count $v->{count}, want $count" if $v->{count} != $count;
            push @d, "excluded_count $v->{excluded_count}, want " . scalar @$want_x
                if $v->{excluded_count} != @$want_x;
        }
        ok(!@d, "$short: $name ($query)") or diag(join "\n", map { "  $_" } @d);
    }
    close $fh;
}

done_testing();
