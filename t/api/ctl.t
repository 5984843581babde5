# agentshopctl without the build tree: defaults beside the executable, commands
# that never create a database, init --demo run twice, migration of a database
# of the oldest schema (t/fixtures/*-v1*), and setup refusing without root.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use File::Temp qw(tempdir);
use File::Copy qw(copy);
use Cwd qw(realpath);
use JSON::PP;
use AgentShop::Test;
use Apache::Test ();

plan skip_all => 'SQLite files (the suite runs on PostgreSQL)' if is_pg();

my $top = realpath(Apache::Test::vars('serverroot') . '/..');
my $ctl = "$top/bin/agentshopctl";
my $dir = tempdir(CLEANUP => 1);
my $json = JSON::PP->new;

# Runs the tool from $dir with %ENV plus $env; returns (exit code, stdout, stderr).
sub run_ctl {
    my ($env, @args) = @_;
    my $cmd = join ' ', map { my $a = $_; $a =~ s/'/'\\''/g; "'$a'" } @args;
    my $envs = join ' ', map { "$_='$env->{$_}'" } sort keys %$env;
    my $out = `cd '$dir' && env -u AGENTSHOP_DB -u AGENTSHOP_DATA $envs $cmd 2>'$dir/stderr'`;
    my $rc = $? >> 8;
    open my $fh, '<', "$dir/stderr" or die $!;
    local $/;
    my $err = <$fh> // '';
    return ($rc, $out, $err);
}

sub sqlite {
    my ($db, $sql) = @_;
    my $out = `sqlite3 '$db' "$sql"`;
    die "sqlite3 $db: $sql" if $?;
    chomp $out;
    return $out;
}

# ---- defaults: beside the executable, never the current directory ----
my ($rc, $out, $err) = run_ctl({}, $ctl, '--help');
like($out, qr/now \Q$top\/var\/agentshop.db\E, the default/, '--help shows the database beside the checkout\'s bin/');
like($out, qr/now \Q$top\/sql\/demo\E/, '... and the demo data of the checkout');
mkdir "$dir/moved" or die $!;
mkdir "$dir/moved/bin" or die $!;
copy($ctl, "$dir/moved/bin/agentshopctl") or die $!;
chmod 0755, "$dir/moved/bin/agentshopctl";
($rc, $out) = run_ctl({}, "$dir/moved/bin/agentshopctl", '--help');
like($out, qr/now \Q$dir\/moved\/var\/agentshop.db\E/, 'a moved copy looks beside itself');
($rc, $out) = run_ctl({ AGENTSHOP_DB => "$dir/env.db", AGENTSHOP_DATA => "$dir/data" }, $ctl, '--help');
like($out, qr/now \Q$dir\/env.db\E, from AGENTSHOP_DB/, 'AGENTSHOP_DB overrides the default');
like($out, qr/now \Q$dir\/data\E, from AGENTSHOP_DATA/, 'AGENTSHOP_DATA overrides the default');
($rc, $out) = run_ctl({ AGENTSHOP_DB => "$dir/env.db" }, $ctl, '--params', "$dir/p.db", '--help');
like($out, qr/now \Q$dir\/p.db\E, from --params/, '--params wins over AGENTSHOP_DB');

# ---- commands other than init never create a database ----
for my $cmd (['key', 'list'], ['mandate', 'list'], ['order', 'ship', 'ord_x'],
             ['catalogue', 'generate', '--products', '1'],
             ['key', 'create', '--user', 'someone']) {
    ($rc, $out, $err) = run_ctl({}, $ctl, '--params', "$dir/none.db", @$cmd);
    ok($rc != 0 && $out eq '' && !-e "$dir/none.db", "@$cmd refuses a missing database and leaves none behind")
      or diag "rc=$rc out=$out err=$err";
    like($err, qr/there is no database \Q$dir\/none.db\E \(from --params.*--params FILE or AGENTSHOP_DB.*agentshopctl --params \Q$dir\/none.db\E init/s,
         '... naming the file, why it looked there, and how to point elsewhere or create it');
}
($rc, $out, $err) = run_ctl({ AGENTSHOP_DB => "$dir/none.db" }, $ctl, 'key', 'list');
ok($rc != 0 && $err =~ /no database \Q$dir\/none.db\E \(from AGENTSHOP_DB/ && !-e "$dir/none.db",
   'the same from AGENTSHOP_DB, saying so') or diag $err;
($rc, $out, $err) = run_ctl({}, "$dir/moved/bin/agentshopctl", 'key', 'list');
ok($rc != 0 && $err =~ /no database \Q$dir\/moved\/var\/agentshop.db\E \(the default/ && !-e "$dir/moved/var",
   'the same for the default') or diag $err;

open my $e, '>', "$dir/empty.db" or die $!;
close $e;
($rc, $out, $err) = run_ctl({}, $ctl, '--params', "$dir/empty.db", 'key', 'list');
ok($rc != 0 && $out eq '' && $err =~ /\Q$dir\/empty.db\E .*has no schema; create it with: agentshopctl --params \Q$dir\/empty.db\E init/,
   'a file without the schema: says so and suggests init') or diag $err;
is(-s "$dir/empty.db", 0, '... and leaves it empty');

# ---- init --demo twice keeps the catalogue ----
($rc, $out, $err) = run_ctl({}, $ctl, '--params', "$dir/demo.db", 'init', '--demo');
is($rc, 0, 'init --demo creates a database') or diag $err;
my $first = $json->decode($out);
is_deeply($first->{schema}, { from => undef, to => $first->{schema}{to}, action => 'created' }, '... says it created the schema');
ok($first->{catalogue}{loaded} && $first->{catalogue}{products} > 0, '... and loaded the catalogue');
sqlite("$dir/demo.db", "UPDATE offers SET stock = 7 WHERE id = (SELECT MIN(id) FROM offers)");
($rc, $out, $err) = run_ctl({}, $ctl, '--params', "$dir/demo.db", 'init', '--demo');
is($rc, 0, 'a second init --demo succeeds') or diag $err;
my $second = $json->decode($out);
ok($second->{catalogue}{kept} && !$second->{catalogue}{loaded}, '... keeps the catalogue and says so');
is($second->{catalogue}{products}, $first->{catalogue}{products}, '... with as many products');
is($second->{schema}{action}, 'current', '... and the schema current');
is(sqlite("$dir/demo.db", "SELECT stock FROM offers WHERE id = (SELECT MIN(id) FROM offers)"), 7,
   '... and the catalogue untouched');
is(sqlite("$dir/demo.db", "SELECT COUNT(*) FROM products"), $first->{catalogue}{products}, '... not duplicated');

# ---- migration of the oldest schema (before schema_version) ----
my $old = "$dir/old.db";
sqlite($old, ".read $top/t/fixtures/schema-v1.sqlite.sql");
sqlite($old, ".read $top/t/fixtures/orders-v1.sql");
($rc, $out, $err) = run_ctl({}, $ctl, '--params', $old, 'mandate', 'list');
ok($rc != 0 && $err =~ /schema version 1, this agentshopctl works with version \d+; agentshopctl init migrates it/,
   'a command on an old schema points at init') or diag $err;
($rc, $out, $err) = run_ctl({}, $ctl, '--params', $old, 'init');
is($rc, 0, 'init migrates the old database') or diag $err;
my $m = $json->decode($out);
is($m->{schema}{from}, 1, '... from version 1');
is($m->{schema}{action}, 'migrated', '... saying it migrated');
is(sqlite($old, 'SELECT version FROM schema_version'), $m->{schema}{to}, '... and records the new version');
is(sqlite($old, "SELECT group_concat(id || ':' || status, ' ') FROM (SELECT * FROM orders ORDER BY id)"),
   'ord_old1:placed ord_old2:delivered', '... keeping the orders');
is(sqlite($old, "SELECT cents FROM mandate_spent WHERE mandate_id = 'mdt_old'"), 1500, '... and the month\'s spending');
($rc, $out, $err) = run_ctl({}, $ctl, '--params', $old, 'mandate', 'list');
is($rc, 0, 'the migrated database serves the other commands') or diag $err;
is($json->decode($out)->{mandates}[0]{id}, 'mdt_old', '... with its mandate');
($rc, $out, $err) = run_ctl({}, $ctl, '--params', $old, 'order', 'ship', 'ord_old1');
is($rc, 0, '... and its orders move on') or diag $err;

# ---- a newer schema is refused, unchanged ----
sqlite($old, 'UPDATE schema_version SET version = 999');
my $before = sqlite($old, 'SELECT COUNT(*) FROM orders') . sqlite($old, 'SELECT version FROM schema_version');
($rc, $out, $err) = run_ctl({}, $ctl, '--params', $old, 'init');
ok($rc != 0 && $out eq '' && $err =~ /schema is version 999, newer than this build of mod_agentshop knows.*Nothing was changed/,
   'init refuses a newer schema') or diag $err;
is(sqlite($old, 'SELECT COUNT(*) FROM orders') . sqlite($old, 'SELECT version FROM schema_version'), $before,
   '... and changes nothing');

# ---- setup is root's ----
SKIP: {
    skip 'runs as root', 1 if $> == 0;
    ($rc, $out, $err) = run_ctl({}, $ctl, '--params', "$dir/setup/shop.db", 'setup');
    ok($rc != 0 && $out eq '' && $err =~ /setup .*must run as root/ && !-e "$dir/setup",
       'setup refuses without root, creating nothing') or diag $err;
}

done_testing();
