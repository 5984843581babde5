#!/usr/bin/perl
# make bench: a long tail of distinct searches over a generated catalogue, one
# path a line (/v1/search?...), the same for the same seed, database and day.
# usage: bench/searches.pl DB [COUNT [SEED]]   (COUNT 2400, SEED 16)
#
# Each search starts from a random product of the catalogue: one to three words
# of its name (brand, series, part words, now and then its number), and, in
# random mixes, its category or part type, a price cap near the prices of its
# kind, a delivery date one to seven days from today, a merchant, a device it
# has compatibility data for, verified_only=false, a sort order, custom weights
# (pairs or URL-encoded JSON), a limit and a page. One search in ten has no
# words (a category or part type to browse). Filters may leave nothing: real
# agents ask for that too.
use strict;
use warnings;
use POSIX qw(strftime);
use File::Temp qw(tempfile);

my ($db, $count, $seed) = @ARGV;
die "usage: $0 DB [COUNT [SEED]]\n" unless defined $db && -f $db;
$count //= 2400;
$seed  //= 16;
srand($seed);

sub sql { # the rows of a query, as arrays of its columns
    my ($q) = @_;
    my ($fh, $file) = tempfile(UNLINK => 1);
    print $fh "$q\n";
    close $fh;
    open(my $out, '-|', 'sqlite3', '-readonly', '-separator', "\t", $db, ".read $file") or die "sqlite3: $!";
    my @rows = map { chomp; [split /\t/, $_, -1] } <$out>;
    close $out or die "sqlite3 failed on: $q\n";
    return @rows;
}

my ($max_id) = map { $_->[0] } sql("SELECT max(id) FROM products");
my @merchants = map { $_->[0] } sql("SELECT id FROM merchants ORDER BY id");
my @devices = map { $_->[0] } sql("SELECT slug FROM devices ORDER BY slug");
my @categories = map { $_->[0] } sql("SELECT DISTINCT category FROM products ORDER BY 1");
my @part_types = map { $_->[0] } sql("SELECT DISTINCT part_type FROM products ORDER BY 1");
# the 20th and 90th percentile of best prices per part type (cents), for caps
my %price;
for my $r (sql("SELECT part_type, price_cents FROM (SELECT p.part_type, o.price_cents, "
        . "ntile(10) OVER (PARTITION BY p.part_type ORDER BY o.price_cents) AS t "
        . "FROM products p JOIN offers o ON o.product_id = p.id WHERE p.id % 97 = 0) "
        . "WHERE t IN (2, 9) GROUP BY part_type, t ORDER BY part_type, t")) {
    push @{$price{$r->[0]}}, $r->[1];
}

# The products the searches start from, with a device each has data for.
my @ids = map { 1 + int(rand($max_id)) } 1 .. int($count * 1.5);
my $values = join(',', map { "($_,$ids[$_])" } 0 .. $#ids);
my @seeds = sql("WITH pick(n, id) AS (VALUES $values) "
    . "SELECT p.name, p.category, p.part_type, COALESCE((SELECT d.slug FROM compat c "
    . "JOIN devices d ON d.id = c.device_id WHERE c.product_id = p.id ORDER BY c.device_id LIMIT 1), '') "
    . "FROM pick JOIN products p ON p.id = pick.id ORDER BY pick.n");
die "no products in $db\n" unless @seeds;

sub pick { $_[int(rand(@_))] }
sub chance { rand() < $_[0] }
sub esc { my $s = shift; $s =~ s/([^A-Za-z0-9._~-])/sprintf('%%%02X', ord $1)/ge; $s }

sub words { # one to three words of the name, in its order
    my @w = map { lc } split / /, shift;
    my $num = $w[-1] =~ /^\d+$/ ? pop @w : undef;
    push @w, $num if defined $num && chance(0.1);
    my $n = pick(1, 1, 1, 2, 2, 3);
    $n = @w if $n > @w;
    my %keep;
    $keep{int(rand(@w))} = 1 while keys %keep < $n;
    return join('+', map { esc($w[$_]) } sort { $a <=> $b } keys %keep);
}

sub cap { # a price cap in EUR near the prices of the part type
    my ($lo, $hi) = @{$price{shift} // [500, 5000]};
    my $c = $lo + rand() * ($hi - $lo);
    return chance(0.5) ? sprintf('%d', $c / 100 + 1) : sprintf('%d.99', $c / 100);
}

sub weights {
    my @k = qw(price delivery quality reliability);
    my %w;
    $w{pick(@k)} = pick(0.2, 0.3, 0.5, 0.6, 0.8, 1) for 1 .. pick(1, 2, 2, 3, 4);
    my @keys = grep { exists $w{$_} } @k;
    return join(',', map { "$_:$w{$_}" } @keys) if chance(0.5);
    return esc('{' . join(',', map { "\"$_\":$w{$_}" } @keys) . '}');
}

my (%seen, @out);
my $tries = 0;
while (@out < $count && $tries++ < $count * 20) {
    my ($name, $category, $part_type, $device) = @{$seeds[$tries % @seeds]};
    my @p;
    my $browse = chance(0.1);
    push @p, 'q=' . words($name) unless $browse;
    my $by_cat = chance($browse ? 0.7 : 0.35);
    push @p, "category=$category" if $by_cat;
    push @p, "part_type=$part_type" if ($browse && !$by_cat) || chance(0.2);
    push @p, 'max_price=' . cap($part_type) if chance(0.2);
    push @p, 'deliver_by=' . strftime('%Y-%m-%d', gmtime(time + 86400 * (1 + int(rand(7))))) if chance(0.15);
    push @p, 'merchant=' . pick(@merchants) if chance(0.12);
    push @p, 'device=' . ($device ne '' && chance(0.8) ? $device : pick(@devices)) if chance(0.08);
    push @p, 'verified_only=false' if chance(0.1);
    push @p, 'sort=' . pick(qw(score price delivery return_rate)) if chance(0.45);
    push @p, 'weights=' . weights() if chance(0.12);
    push @p, 'limit=' . pick(10, 20, 50) if chance(0.6);
    push @p, 'offset=' . 20 * pick(1, 1, 1, 1, 2, 2, 2, 3, 3, 4, 5, 10) if chance(0.3);
    my $path = '/v1/search?' . join('&', @p);
    next if $seen{$path}++;
    push @out, $path;
}
die "only " . scalar(@out) . " distinct searches of $count\n" if @out < $count;
print "$_\n" for @out;
