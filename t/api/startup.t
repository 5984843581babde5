# httpd refuses to start on a database its children cannot use (docs/deploy.md,
# "Checks at start"): each case is a separate httpd of its own, started in the
# foreground on a free port, that must exit non-zero within seconds and say why
# in its error log; a good database starts and answers.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use File::Temp qw(tempdir);
use LWP::UserAgent;
use JSON::PP ();
use AgentShop::Test;
use AgentShop::OwnHttpd;
use Apache::Test ();

plan skip_all => 'the file checks are SQLite\'s (the suite runs on PostgreSQL)' if is_pg();
plan skip_all => 'runs as a user other than root (scripts/apache-test.sh)' if $> == 0;

my $top  = Apache::Test::vars('serverroot') . '/..';
my $ctl  = "$top/bin/agentshopctl";
my $dir  = tempdir(CLEANUP => 1);
my $user = getpwuid($>);

sub sh { my $rc = system(@_); die "@_ failed" if $rc; }

sub start {
    my ($name, $db, $extra) = @_;
    return start_httpd(dir => $dir, name => $name, db => $db, top => $top, extra => $extra);
}

# Each bad database: httpd exits non-zero and its log names what is wrong.
sub refuses {
    my ($name, $db, $want, $what, $extra) = @_;
    my ($rc, $log, $pid) = start($name, $db, $extra);
    if (!defined $rc) {
        stop_httpd($pid);
        fail("$what: httpd must not start");
        diag $log;
        return;
    }
    ok($rc != 0 && $log =~ $want, $what) or diag "rc=$rc: $log";
    ok($log =~ /\[\S*:crit\].*refusing to start/, '... in one crit line') or diag $log;
}

refuses('missing', "$dir/missing.db",
        qr/the database \Q$dir\/missing.db\E does not exist.*user \Q$user\E/,
        'a missing database file stops httpd, naming the file and the user');
ok(!-e "$dir/missing.db", '... and httpd did not create it');

mkdir "$dir/ro" or die $!;
sh("$ctl --params '$dir/ro/shop.db' init >/dev/null");
chmod 0555, "$dir/ro" or die $!;
refuses('rodir', "$dir/ro/shop.db",
        qr/the directory \Q$dir\/ro\E of the database \Q$dir\/ro\/shop.db\E is not writable by the user \Q$user\E.*chown \Q$user $dir\/ro\E/,
        'a database directory the children cannot write stops httpd, naming it and the user');
chmod 0755, "$dir/ro";

sh("$ctl --params '$dir/rofile.db' init >/dev/null");
chmod 0444, "$dir/rofile.db" or die $!;
refuses('rofile', "$dir/rofile.db",
        qr/the database \Q$dir\/rofile.db\E is not writable by the user \Q$user\E/,
        'a database file the children cannot write stops httpd');

open my $e, '>', "$dir/empty.db" or die $!;
close $e;
refuses('empty', "$dir/empty.db",
        qr/the database \Q$dir\/empty.db\E is empty: it has no schema; create it with agentshopctl .*init/,
        'a database without the schema stops httpd');
is(-s "$dir/empty.db", 0, '... which leaves the file as it was');

sh("$ctl --params '$dir/newer.db' init >/dev/null");
sh('sqlite3', "$dir/newer.db", 'UPDATE schema_version SET version = 999');
refuses('newer', "$dir/newer.db",
        qr/the database \Q$dir\/newer.db\E has schema version 999, this mod_agentshop needs version \d+/,
        'a database of a newer schema version stops httpd');

{
    open my $s, '-|', 'sqlite3', "$dir/older.db", ".read $top/t/fixtures/schema-v1.sqlite.sql"
      or die $!;
    my @ignored = <$s>;
    close $s or die 'sqlite3 failed';
}
refuses('older', "$dir/older.db",
        qr/the database \Q$dir\/older.db\E has schema version 1.*agentshopctl .*init migrates it/,
        'a database of an older schema version stops httpd, saying init migrates it');

# Besides <Location /v1>, one whose path ends in a slash: its base is the
# path without it (docs/deploy.md writes bases and AgentShopBaseURL so).
sh("$ctl --params '$dir/good.db' --data '$top/sql/demo' init --demo >/dev/null");
my ($rc, $log, $pid, $port) = start('good', "$dir/good.db",
    "<Location /slash/v1/>\n    SetHandler agentshop\n    AgentShopSigningKeyFile \"$dir/signing.key\"\n</Location>");
ok(!defined $rc, 'a good database starts httpd') or diag $log;
if (!defined $rc) {
    my $ua = LWP::UserAgent->new(timeout => 10);
    my $res = $ua->get("http://127.0.0.1:$port/v1/search?q=soap");
    is($res->code, 200, '... which answers GET /v1/search') or diag $res->as_string;
    like($res->decoded_content, qr/"results":\[\{"sku"/, '... with products');
    for my $loc ('/v1', '/slash/v1/') {
        (my $base = $loc) =~ s{/$}{};
        my $api = "http://127.0.0.1:$port$base";
        $res = $ua->get("$api/search?q=soap");
        like($res->decoded_content, qr/"results":\[\{"sku"/, "<Location $loc>: GET $base/search finds products")
          or diag $res->as_string;
        $res = $ua->get("$api/openapi.json");
        my $doc = eval { JSON::PP::decode_json($res->content) } // {};
        is($doc->{servers}[0]{url}, $api, "... its links start $api, with no slash after it");
        for my $path ('/nope', '/products/%2F') { # the handler's 404; httpd's, before any <Location>
            $res = $ua->get("$api$path");
            is_json_error($res, eval { JSON::PP::decode_json($res->content) }, 404, 'NOT_FOUND',
                          "... GET $base$path is the API's JSON 404");
        }
    }
    stop_httpd($pid);
}

# The API at the server's root (<Location />): its base is "", so its links
# are the server's URL and a path.
($rc, $log, $pid, $port) = start('root', "$dir/good.db",
    "<Location />\n    SetHandler agentshop\n    AgentShopSigningKeyFile \"$dir/signing.key\"\n</Location>");
ok(!defined $rc, 'the API at the root starts httpd') or diag $log;
if (!defined $rc) {
    my $ua = LWP::UserAgent->new(timeout => 10);
    my $api = "http://127.0.0.1:$port";
    my $res = $ua->get("$api/search?q=soap");
    like($res->decoded_content, qr/"results":\[\{"sku"/, '... GET /search finds products')
      or diag $res->as_string;
    $res = $ua->get("$api/openapi.json");
    my $doc = eval { JSON::PP::decode_json($res->content) } // {};
    is($doc->{servers}[0]{url}, $api, '... its links start with the server\'s URL, no slash after it');
    for my $path ('/nope', '/products/%2F') {
        $res = $ua->get("$api$path");
        is_json_error($res, eval { JSON::PP::decode_json($res->content) }, 404, 'NOT_FOUND',
                      "... GET $path is the API's JSON 404");
    }
    stop_httpd($pid);
}

# A virtual host with a database of its own is checked too; the main server's
# good one does not hide it.
refuses('vhost', "$dir/good.db",
        qr/the database \Q$dir\/vhost-missing.db\E does not exist/,
        'a <VirtualHost> whose own DBDParams is missing stops httpd',
        "<VirtualHost *>\n    DBDParams \"$dir/vhost-missing.db\"\n</VirtualHost>");

# A database that becomes read-only while httpd runs: the log names it and the
# user (new connections per request, so the next one opens it read-only).
sh("$ctl --params '$dir/later.db' --data '$top/sql/demo' init --demo >/dev/null");
my $key = `$ctl --params '$dir/later.db' key create --user ro-user` =~ /"key": "([^"]+)"/ ? $1 : die 'no key';
sh("$ctl --params '$dir/later.db' mandate create --user ro-user --categories hand-soap --per-order-eur 50 --monthly-eur 100 --confirm-above-eur 40 >/dev/null");
($rc, $log, $pid, $port) = start('later', "$dir/later.db", 'DBDPersist Off');
ok(!defined $rc, 'httpd starts on a writable database') or diag $log;
if (!defined $rc) {
    chmod 0444, "$dir/later.db" or die $!;
    my $res = LWP::UserAgent->new(timeout => 10)->post("http://127.0.0.1:$port/v1/quotes",
        'Authorization' => "Bearer $key", 'Service-Agent' => 'startup-test/1',
        'Content-Type' => 'application/json', Content => '{"sku":"HS-0027","quantity":1}');
    is($res->code, 503, 'a write to a database made read-only fails') or diag $res->as_string;
    stop_httpd($pid);
    open my $lf, '<', "$dir/later/error_log" or die $!;
    my $elog = do { local $/; <$lf> };
    like($elog, qr/readonly database \(the database \Q$dir\/later.db\E or its directory is not writable by the user \Q$user\E/,
         '... and the log line names the file and the user');
}

done_testing();
