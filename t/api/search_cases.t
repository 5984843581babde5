# GET /v1/search against the cases of t/search-cases/*.tsv: one row a case,
# the search's parameters and the SKUs the demo catalogue (sql/demo/) says it
# must give, in order (or as a set), the SKUs it must exclude and the count.
# The rows are a specification written from the data (t/search-cases/README.md),
# not a record of what the engine answered: a mismatch names what differs.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use AgentShop::Test;

my $dir = "$FindBin::Bin/../search-cases";
my @files = sort glob "$dir/*.tsv";
ok(@files, "case files in t/search-cases") or BAIL_OUT("no t/search-cases/*.tsv");

my $products = demo_data('products');
my %known = map { $_->{sku} => 1 } @$products;

# The cases are written against the demo's stock: whether each offer is in
# stock decides which offer is best, and so the order. Earlier scripts of the
# suite buy from it (an offer of a few units may sell out) or move it and put it
# back; what differs from the demo file is put back first, and said.
my %demo_stock = map { my $p = $_; map { ($_->{offer_id} => $_->{stock}) } @{ $p->{offers} } } @$products;
my %now = map { $_->[0] => $_->[1] } sql('SELECT id, stock FROM offers');
my @extra = grep { !exists $demo_stock{$_} } sort keys %now;
is_deeply(\@extra, [], 'no offer beyond the demo catalogue\'s') or diag("offers left by an earlier script: @extra");
my @moved = grep { exists $now{$_} && ($now{$_} > 0) != ($demo_stock{$_} > 0) } sort keys %demo_stock;
for my $id (@moved) {
    diag("offer $id: stock $now{$id}, the demo's $demo_stock{$id}: put back");
    sql_write("UPDATE offers SET stock = $demo_stock{$id} WHERE id = '$id'");
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
        my ($res, $v) = api_get("/search?$query");
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
