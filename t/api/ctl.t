# agentshopctl without the build tree: defaults beside the executable, commands
# that never create a database, init --demo run twice, migration of a database
# of the oldest schema (t/fixtures/*-v1*) and of version 2 (t/fixtures/*-v2*:
# every row kept, the layout of a new database, all or nothing), and setup
# refusing without root.
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
# the tool closes its connection: SQLite, closing the last one, checkpoints and
# removes the WAL (it keeps them while a prepared statement is left unfinalized)
ok(!-e "$dir/demo.db-wal", '... and closes the database behind it (no WAL left)');
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

# ---- migration of version 2 (t/fixtures/*-v2*, t/fixtures/make-v2.sh) ----
# The layout of a database: every table with its columns, every index and trigger.
sub layout {
    my ($db) = @_;
    return sqlite($db, "SELECT m.type || ' ' || m.name || ' (' || COALESCE((SELECT group_concat("
                     . "c.name || ' ' || c.type || ' ' || c.[notnull] || ' ' || c.pk, ', ') FROM "
                     . "pragma_table_info(m.name) c), '') || ')' FROM sqlite_master m WHERE m.name "
                     . "NOT LIKE 'sqlite%' ORDER BY m.type, m.name");
}
my $fresh = "$dir/demo.db"; # made by init above
# Tables version 4 adds (empty in a migrated database; the layout checks see them).
my %new_in_4 = map { $_ => 1 } qw(passkeys enrolments webauthn_challenges);
my @tables = grep { !$new_in_4{$_} }
  split /\n/, sqlite($fresh, "SELECT name FROM sqlite_master WHERE type = 'table' AND "
                          . "name NOT LIKE 'sqlite%' AND name <> 'schema_version' ORDER BY name");
# What version 3 drops of the tables it keeps.
my %dropped = (product_rank => { map { $_ => 1 } qw(sku category part_type) });
# What versions 4, 5, 7 and 8 add to tables that had rows (NULL, 0, NULL and
# what the orders bought, in the rows from before).
my %added = (orders => { map { $_ => 1 } qw(key_id product_name category merchant_name) },
             product_versions => { seq => 1 },
             map { $_ => { withdrawn_at => 1 } } qw(merchants products offers devices));
# Every row of every table a new database has, but what version 3 drops and 4 and 5 add.
sub rows {
    my ($db) = @_;
    my %rows;
    for my $t (@tables) {
        my @cols = grep { !$dropped{$t}{$_} && !$added{$t}{$_} }
          split /\n/, sqlite($db, "SELECT name FROM pragma_table_info('$t') ORDER BY cid");
        $rows{$t} = @cols ? sqlite($db, 'SELECT ' . join(', ', map { "quote($_)" } @cols)
                                      . " FROM $t ORDER BY " . join(', ', 1 .. @cols)) : undef;
    }
    return \%rows;
}
sub make_v2 {
    my ($db) = @_;
    system("$top/t/fixtures/make-v2.sh", 'sqlite3', $db) == 0 or die "make-v2.sh $db failed";
    return $db;
}

my $v2 = make_v2("$dir/v2.db");
my $v2_rows = rows($v2);
is(sqlite($v2, 'SELECT version FROM schema_version'), 2, 'a database of schema version 2');
cmp_ok(sqlite($v2, "SELECT COUNT(*) FROM product_fts WHERE product_fts MATCH 'dyson'"), '>', 0,
       '... with its full-text table filled');
is(scalar(grep { length($v2_rows->{$_} // '') } @tables), scalar(@tables), '... and rows in every table')
  or diag join ' ', grep { !length($v2_rows->{$_} // '') } @tables;
($rc, $out, $err) = run_ctl({}, $ctl, '--params', $v2, 'order', 'ship', 'ord_v2_1');
ok($rc != 0 && $err =~ /schema version 2, this agentshopctl works with version 8; agentshopctl init migrates it/,
   'a command on version 2 points at init') or diag $err;
($rc, $out, $err) = run_ctl({}, $ctl, '--params', $v2, 'init');
is($rc, 0, 'init migrates it') or diag $err;
$m = $json->decode($out);
is_deeply($m->{schema}, { from => 2, to => 8, action => 'migrated' }, '... from 2 to 8');
is(sqlite($v2, 'SELECT version FROM schema_version'), 8, '... recording version 8');
is(sqlite($v2, 'SELECT (SELECT COUNT(*) FROM products WHERE withdrawn_at IS NOT NULL) + (SELECT COUNT(*) FROM offers '
               . 'WHERE withdrawn_at IS NOT NULL) + (SELECT COUNT(*) FROM merchants WHERE withdrawn_at IS NOT NULL)'), 0,
   '... nothing withdrawn (version 7: every product, offer and merchant still sold)');
is(sqlite($v2, 'SELECT COUNT(*) FROM product_versions WHERE seq <> 0'), 0,
   '... every product at live sequence 0 (a search index built after reads its stock then)');
is_deeply(rows($v2), $v2_rows, '... keeping every row of every table (product_rank without its copies of sku, category and part type)');
is(layout($v2), layout($fresh), '... in the layout of a new database');
is(sqlite($v2, 'SELECT COUNT(*) FROM orders WHERE key_id IS NULL'), sqlite($v2, 'SELECT COUNT(*) FROM orders'),
   '... its orders with no agent key recorded (key_id NULL: not known before version 4)');
is(layout($old), layout($fresh), '(as the version-1 database migrated above)');
is(sqlite($v2, "SELECT COUNT(*) FROM sqlite_master WHERE name IN ('product_fts', 'product_counts', "
               . "'rank_score', 'rank_hidden') OR name LIKE 'product_fts_%'"), 0,
   '... without the full-text table, product_counts and the paging indexes');
is(sqlite($v2, "SELECT group_concat(id || ':' || status, ' ') FROM (SELECT * FROM orders ORDER BY id)"),
   'ord_v2_1:placed ord_v2_2:returned ord_v2_3:cancelled', '... its orders as they were');
is(sqlite($v2, "SELECT cents FROM mandate_spent WHERE mandate_id = 'mdt_v2' AND month = '2026-01'"), 12602,
   '... and their month\'s spending');
is(sqlite($v2, "SELECT group_concat(o.id || ':' || o.product_name || ':' || o.category || ':' || o.merchant_name, "
               . "' | ') FROM (SELECT * FROM orders ORDER BY id) o"),
   sqlite($v2, "SELECT group_concat(o.id || ':' || p.name || ':' || p.category || ':' || m.name, ' | ') FROM "
               . "(SELECT * FROM orders ORDER BY id) o JOIN quotes q ON q.id = o.quote_id JOIN products p ON "
               . "p.id = q.product_id JOIN offers f ON f.id = o.offer_id JOIN merchants m ON m.id = f.merchant_id"),
   '... each with what it bought, as the catalogue named it (version 8)');
is(sqlite($old, "SELECT group_concat(product_name || ':' || category, ' ') FROM (SELECT * FROM orders ORDER BY id)"),
   'Old soap:hand-soap Old soap:hand-soap', '(and the version-1 database\'s orders theirs)');
is(sqlite($v2, 'PRAGMA integrity_check'), 'ok', '... and the file sound');
($rc, $out, $err) = run_ctl({}, $ctl, '--params', $v2, 'init');
is($rc, 0, 'init again') or diag $err;
is($json->decode($out)->{schema}{action}, 'current', '... finds it current');
is_deeply(rows($v2), $v2_rows, '... and changes no row');
is(layout($v2), layout($fresh), '... nor the layout');
($rc, $out, $err) = run_ctl({}, $ctl, '--params', $v2, 'order', 'ship', 'ord_v2_1');
is($rc, 0, 'its orders move on') or diag $err;
is(sqlite($v2, "SELECT status FROM orders WHERE id = 'ord_v2_1'"), 'shipped', '... ord_v2_1 shipped');

# Version 7 kept a challenge for every look at a link: several of one
# confirmation may expire in the same second. Version 8 keeps one of each such
# group, so that (subject, purpose, expiry) can be unique.
my $v7 = "$dir/v7.db";
system('cp', $fresh, $v7) == 0 or die "cp: $!";
sqlite($v7, 'DROP INDEX webauthn_challenges_slot');
sqlite($v7, "INSERT INTO webauthn_challenges (challenge, purpose, subject_id, expires_at) VALUES "
          . "('c1', 'approve', 'conf_a', 2000000000), ('c2', 'approve', 'conf_a', 2000000000), "
          . "('c3', 'approve', 'conf_a', 2000000300), ('c4', 'enrol', 'enr_a', 2000000000)");
sqlite($v7, 'UPDATE schema_version SET version = 7');
($rc, $out, $err) = run_ctl({}, $ctl, '--params', $v7, 'init');
is($rc, 0, 'init migrates a version 7 database with challenges of the same expiry') or diag $err;
is_deeply($json->decode($out)->{schema}, { from => 7, to => 8, action => 'migrated' }, '... from 7 to 8');
is(sqlite($v7, "SELECT group_concat(challenge, ' ') FROM (SELECT challenge FROM webauthn_challenges ORDER BY 1)"),
   'c1 c3 c4', '... keeping one challenge of each subject and expiry');
is(layout($v7), layout($fresh), '... in the layout of a new database (the unique index made)');

# A failure halfway leaves the database as it was: a view of the user's on a
# column that version 3 drops stops the step after it dropped other things.
my $held = make_v2("$dir/v2-view.db");
sqlite($held, 'CREATE VIEW my_skus AS SELECT sku FROM product_rank');
my ($held_layout, $held_rows) = (layout($held), rows($held));
($rc, $out, $err) = run_ctl({}, $ctl, '--params', $held, 'init');
ok($rc != 0 && $out eq '' && $err =~ /migrating the schema of \Q$held\E failed: .*my_skus/s,
   'a migration that fails says why') or diag $err;
is(sqlite($held, 'SELECT version FROM schema_version'), 2, '... leaves version 2');
is(layout($held), $held_layout, '... every table, column, index and trigger');
is_deeply(rows($held), $held_rows, '... and every row');
cmp_ok(sqlite($held, "SELECT COUNT(*) FROM product_fts WHERE product_fts MATCH 'dyson'"), '>', 0,
       '... the full-text table still answering');

# Each part of the step is guarded: a version-2 database without some of what
# it drops migrates all the same.
my $part = make_v2("$dir/v2-part.db");
sqlite($part, 'DROP TABLE product_fts; DROP TABLE product_counts; DROP INDEX rank_hidden');
($rc, $out, $err) = run_ctl({}, $ctl, '--params', $part, 'init');
is($rc, 0, 'a version-2 database without product_fts, product_counts and an index migrates') or diag $err;
is(layout($part), layout($fresh), '... to the layout of a new database');

# ---- a catalogue's number is random: a database made again at the same path
# does not take the old one's (whose index files httpd keeps) ----
my @numbers;
for (1 .. 2) {
    unlink "$dir/again.db";
    ($rc, $out, $err) = run_ctl({}, $ctl, '--params', "$dir/again.db", 'init', '--demo');
    is($rc, 0, "init --demo of again.db, time $_") or diag $err;
    push @numbers, sqlite("$dir/again.db", "SELECT value FROM meta WHERE key = 'search_catalogue'");
}
like($numbers[0], qr/^[1-9]\d{6,}$/, "the catalogue's number is a large one ($numbers[0])");
isnt($numbers[1], $numbers[0], '... and the database made again at the same path has another');

# ---- setup is root's ----
SKIP: {
    skip 'runs as root', 1 if $> == 0;
    ($rc, $out, $err) = run_ctl({}, $ctl, '--params', "$dir/setup/shop.db", 'setup');
    ok($rc != 0 && $out eq '' && $err =~ /setup .*must run as root/ && !-e "$dir/setup",
       'setup refuses without root, creating nothing') or diag $err;
}

done_testing();
