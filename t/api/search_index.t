# The search index is built once per database and catalogue version and
# shared by the children (issue 16): the first child that needs it writes it
# as one file in AgentShopSearchIndexDir (here the default, agentshop-index in
# DefaultRuntimeDir, t/logs), and every other child maps that file read-only
# instead of building its own. Checked from what httpd leaves behind: the
# files (owned by the children's user, writable by nobody else) and the error
# log's lines at info (one "built" per file; the other children "mapped").
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use Apache::Test ();
use AgentShop::Test;

my $logs = Apache::Test::vars('t_logs');
my $dir = "$logs/agentshop-index";

# several clients at once, so that several children answer
my @bodies = bodies_everywhere('/search?q=hand+soap&limit=5');
is(scalar(grep { !/^HTTP / } @bodies), 24, 'every client got its page of results');
is(scalar(keys %{ { map { $_ => 1 } @bodies } }), 1, '... the same page, whichever child answered');

my @dst = stat $dir;
ok(@dst, "the index directory $dir exists");
ok(@dst && !($dst[2] & 022), '... writable by its owner only');
opendir(my $d, $dir) or die "$dir: $!";
my @files = grep { /\.idx$/ } readdir $d;
closedir $d;
ok(@files >= 1, 'index files are there') or diag("none in $dir");
for my $f (@files) {
    my @st = stat "$dir/$f";
    ok(!($st[2] & 022), "$f: writable by its owner only");
    is($st[4], $dst[4], "$f: owned by the children's user (the directory's owner)");
}

# The error log: every file built once, by one child; the others mapped it.
open my $log, '<', "$logs/error_log" or die "error_log: $!";
my (%built, %mapped, %by_pid);
while (<$log>) {
    next unless /\[pid (\d+)[^\]]*\] agentshop: search index (\d+) products, (\d+) bytes, (built in \d+ ms|mapped) \((.+?)\)/;
    my ($pid, $how, $file) = ($1, $4, $5);
    ($how =~ /^built/ ? $built{$file} : $mapped{$file})++;
    $by_pid{"$pid $file"}++;
}
close $log;
ok(%built, 'builds were logged at info') or diag('no "search index ... built" line in the error log');
my @twice = grep { $built{$_} != 1 } sort keys %built;
is(scalar @twice, 0, 'each index file was built once, by one child')
  or diag(join "\n", map { "$_: built $built{$_} times" } @twice);
my @again = grep { $by_pid{$_} > 1 } sort keys %by_pid;
is(scalar @again, 0, 'no child built or mapped the same file twice') or diag(join "\n", @again);
ok(scalar(grep { $mapped{$_} } keys %built) >= 1, 'other children mapped a file another one built')
  or diag(explain(\%mapped));
done_testing();
