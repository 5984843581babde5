#!/usr/bin/perl
# make bench: GET each path of a file (one per line) from BASE, one after the
# other, each on a new connection (so each httpd child gets some); prints
# "status bytes md5 path" per path: the sizes the search ceiling is chosen
# from, and the digests that compare two databases' answers.
# usage: bench/sizes.pl BASE PATHS_FILE
use strict;
use warnings;
use Digest::MD5 qw(md5_hex);
use HTTP::Tiny;

my ($base, $file) = @ARGV;
die "usage: $0 BASE PATHS_FILE\n" unless defined $file;
my $http = HTTP::Tiny->new(keep_alive => 0, timeout => 900);
open(my $fh, '<', $file) or die "$file: $!\n";
$| = 1;
while (my $p = <$fh>) {
    chomp $p;
    next if $p eq '';
    my $r = $http->get("$base$p");
    die "GET $base$p: $r->{content}\n" if $r->{status} == 599; # no answer at all
    printf "%d %d %s %s\n", $r->{status}, length $r->{content}, md5_hex($r->{content}), $p;
}
