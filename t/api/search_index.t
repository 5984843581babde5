# The search index is built once per database and catalogue version and
# shared by the children (issue 16): the first child that needs it writes it
# as one file in AgentShopSearchIndexDir (here the default, agentshop-index in
# DefaultRuntimeDir, t/logs), and every other child maps that file read-only
# instead of building its own. Checked from what httpd leaves behind: the
# files (owned by the children's user, writable by nobody else) and the error
# log's lines at info (one "built" per file; the other children "mapped").
# A graceful restart keeps the files: the new children map them.
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
# A graceful restart keeps the files (issue 16): the new generation's children
# map the file the old one built, with no build, and answer the same page.
my %inode = map { $_ => (stat "$dir/$_")[1] } @files;
my $log_size = -s "$logs/error_log";
my $pid_file = "$logs/httpd.pid";
open my $pf, '<', $pid_file or die "$pid_file: $!";
chomp(my $parent = <$pf> // '');
close $pf;
ok($parent =~ /^\d+$/ && kill('USR1', $parent), "a graceful restart of httpd ($parent)");
my $restarted = 0;
for (1 .. 300) { # the log says when the new generation serves
    open my $l, '<', "$logs/error_log" or die "error_log: $!";
    seek $l, $log_size, 0;
    local $/;
    my $new = <$l> // '';
    close $l;
    last if ($restarted = $new =~ /resuming normal operations/);
    select(undef, undef, undef, 0.1);
}
ok($restarted, '... done: httpd is serving again');
my @after = bodies_everywhere('/search?q=hand+soap&limit=5');
is_deeply([ sort keys %{ { map { $_ => 1 } @after } } ], [ $bodies[0] ],
          '... every client got the same page as before the restart');
for my $f (@files) {
    is((stat "$dir/$f")[1], $inode{$f}, "$f: kept across the restart (the same file)");
}
open $log, '<', "$logs/error_log" or die "error_log: $!";
seek $log, $log_size, 0;
my ($built_after, $mapped_after) = (0, 0);
while (<$log>) {
    next unless /agentshop: search index \d+ products, \d+ bytes, (built in \d+ ms|mapped) \((.+?)\)/;
    $1 =~ /^built/ ? $built_after++ : $mapped_after++;
}
close $log;
is($built_after, 0, '... no child of the new generation built an index')
  or diag("$built_after builds after the restart");
cmp_ok($mapped_after, '>=', 1, '... they mapped the kept file');
done_testing();
