# The admin tool's errors, httpd refusing bad configuration at start, bodies
# over 64 KiB, and no agent key in any log line.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use File::Temp qw(tempdir);
use AgentShop::Test;
use Apache::Test ();

my $top = Apache::Test::vars('serverroot') . '/..';
my $db  = Apache::Test::vars('serverroot') . '/var/agentshop.db';

sub ctl_fails {
    my ($name, $want, @args) = @_;
    my $cmd = ctl_argv(@args);
    my $out = `$cmd 2>&1 >/dev/null`;
    my $rc = $? >> 8;
    ok($rc != 0 && $out =~ $want, $name) or diag "rc=$rc: $out";
}

# ---- agentshopctl: each mistake is a clear error and a non-zero exit ----
my ($user) = new_agent();
my @m = ('mandate', 'create', '--user', $user);
ctl_fails('unknown category', qr/unknown category 'shoes'.*hand-soap/, @m, qw(--categories shoes --per-order-eur 10 --monthly-eur 20 --confirm-above-eur 5));
ctl_fails('negative amount', qr/--per-order-eur must not be negative/, @m, qw(--categories hand-soap --per-order-eur -10 --monthly-eur 20 --confirm-above-eur 5));
ctl_fails('malformed amount', qr/--monthly-eur must be an amount in euros/, @m, qw(--categories hand-soap --per-order-eur 10 --monthly-eur 2O --confirm-above-eur 5));
ctl_fails('three decimals', qr/--confirm-above-eur must be an amount/, @m, qw(--categories hand-soap --per-order-eur 10 --monthly-eur 20 --confirm-above-eur 5.001));
ctl_fails('confirm-above above the per-order limit', qr/--confirm-above-eur 50 is above --per-order-eur 10/, @m, qw(--categories hand-soap --per-order-eur 10 --monthly-eur 20 --confirm-above-eur 50));
ctl_fails('missing amount', qr/--monthly-eur is required/, @m, qw(--categories hand-soap --per-order-eur 10 --confirm-above-eur 5));
ctl_fails('bad date', qr/--valid-until must be a date/, @m, qw(--categories hand-soap --per-order-eur 10 --monthly-eur 20 --confirm-above-eur 5 --valid-until 2027-02-30));
ctl_fails('past date', qr/in the past/, @m, qw(--categories hand-soap --per-order-eur 10 --monthly-eur 20 --confirm-above-eur 5 --valid-until 2020-01-01));
ctl_fails('unknown option', qr/unknown argument '--colour'/, @m, qw(--categories hand-soap --colour red));
ctl_fails('unknown mandate id', qr/no mandate 'mdt_nosuch'/, qw(mandate revoke mdt_nosuch));
ctl_fails('unknown key id', qr/no key 'key_nosuch'/, qw(key revoke key_nosuch));
ctl_fails('bad user name', qr/must be 1 to 64/, qw(key create --user), 'a b');
ctl_fails('unknown command', qr/unknown command/, qw(frobnicate));
my $md = new_mandate($user, per_order => 10, monthly => 20, confirm_above => 5);
is($md->{per_order_limit_cents}, 1000, 'a good mandate is created, amounts in cents');
ctl_fails('a second active mandate', qr/already has the active mandate \Q$md->{id}\E/, @m, qw(--categories hand-soap --per-order-eur 10 --monthly-eur 20 --confirm-above-eur 5));
my $list = ctl('key', 'list', '--user', $user);
is(scalar @{ $list->{keys} }, 1, 'key list shows the key');
ok(!grep({ exists $_->{key} || exists $_->{key_hash} } @{ $list->{keys} }), '... but never the key or its hash');

# ---- httpd refuses bad configuration at start, saying why ----
my $dir = tempdir(CLEANUP => 1);
sub configtest {
    my (%o) = @_;
    open my $fh, '>', "$dir/httpd.conf" or die $!;
    print $fh <<"CONF";
ServerRoot "$dir"
Listen 127.0.0.1:1
PidFile "$dir/pid"
ErrorLog "$dir/error_log"
LoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so
LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so
LoadModule dbd_module /usr/lib/apache2/modules/mod_dbd.so
LoadModule agentshop_module "$top/mod_agentshop/.libs/mod_agentshop.so"
DBDriver sqlite3
DBDParams "$db"
@{[ $o{server} // '' ]}
<Location /v1>
    SetHandler agentshop
    $o{extra}
</Location>
CONF
    close $fh;
    my $out = `/usr/sbin/apache2 -t -f '$dir/httpd.conf' 2>&1`;
    return ($? >> 8, $out);
}
open my $k, '>', "$dir/short.key" or die $!; print $k 'x' x 31; close $k;
open $k, '>', "$dir/good.key" or die $!; print $k 'y' x 32, "\n"; close $k;
my ($rc, $out) = configtest(extra => "AgentShopSigningKeyFile $dir/good.key");
is($rc, 0, 'a good configuration passes') or diag $out;
($rc, $out) = configtest(extra => "AgentShopSigningKeyFile $dir/short.key");
ok($rc && $out =~ /AgentShopSigningKeyFile: .*31 bytes; the secret must be at least 32 bytes/, 'a secret under 32 bytes stops httpd') or diag $out;
($rc, $out) = configtest(extra => "AgentShopSigningKeyFile $dir/missing.key");
ok($rc && $out =~ /AgentShopSigningKeyFile: cannot read/, 'a missing secret file stops httpd') or diag $out;
($rc, $out) = configtest(extra => "AgentShopSigningKeyFile $dir/good.key\n AgentShopQuoteTTL ten");
ok($rc && $out =~ /AgentShopQuoteTTL: 'ten' is not a whole number/, 'a bad AgentShopQuoteTTL stops httpd') or diag $out;
($rc, $out) = configtest(extra => "AgentShopSigningKeyFile $dir/good.key\n AgentShopKeyPrefix Bad_Prefix");
ok($rc && $out =~ /AgentShopKeyPrefix: 'Bad_Prefix'/, 'a bad AgentShopKeyPrefix stops httpd') or diag $out;
($rc, $out) = configtest(extra => "AgentShopSigningKeyFile $dir/good.key\n AgentShopBaseURL ftp://x");
ok($rc && $out =~ /AgentShopBaseURL/, 'a bad AgentShopBaseURL stops httpd') or diag $out;
($rc, $out) = configtest(extra => "AgentShopSigningKeyFile $dir/good.key\n AgentShopMCPAllowOrigin https://a.example http://b.example:8080");
is($rc, 0, 'AgentShopMCPAllowOrigin takes origins') or diag $out;
($rc, $out) = configtest(extra => "AgentShopSigningKeyFile $dir/good.key\n AgentShopMCPAllowOrigin https://a.example/app");
ok($rc && $out =~ /AgentShopMCPAllowOrigin: 'https:\/\/a.example\/app' is not an origin/, 'an AgentShopMCPAllowOrigin with a path stops httpd') or diag $out;

($rc, $out) = configtest(extra => "AgentShopSigningKeyFile $dir/good.key",
                         server => "AgentShopViewCache 100\nAgentShopSearchCache off");
is($rc, 0, 'AgentShopViewCache and AgentShopSearchCache take a number or off') or diag $out;
($rc, $out) = configtest(extra => "AgentShopSigningKeyFile $dir/good.key", server => "AgentShopSearchCache lots");
ok($rc && $out =~ /AgentShopSearchCache: 'lots' must be a number of search pages/, 'a bad AgentShopSearchCache stops httpd') or diag $out;
($rc, $out) = configtest(extra => "AgentShopSigningKeyFile $dir/good.key", server => "AgentShopViewCache -1");
ok($rc && $out =~ /AgentShopViewCache: '-1' must be a number of product views/, 'a bad AgentShopViewCache stops httpd') or diag $out;
($rc, $out) = configtest(extra => "AgentShopSigningKeyFile $dir/good.key", server => "AgentShopVersionsMaxAge 0");
is($rc, 0, 'AgentShopVersionsMaxAge 0 (read the versions per request) is accepted') or diag $out;
for my $bad ('1001', '-1', '100ms', 'ten') {
    ($rc, $out) = configtest(extra => "AgentShopSigningKeyFile $dir/good.key", server => "AgentShopVersionsMaxAge '$bad'");
    ok($rc && $out =~ /AgentShopVersionsMaxAge: '\Q$bad\E' must be a number of milliseconds from 0 .* to 1000/,
       "AgentShopVersionsMaxAge '$bad' stops httpd") or diag $out;
}

# ---- bodies above 64 KiB ----
my ($u2, $key2) = new_agent();
my $big = '{"sku":"' . ('A' x 70000) . '"}';
my ($res, $v) = post_json('/quotes', agent_headers($key2), $big);
is_json_error($res, $v, 413, 'PAYLOAD_TOO_LARGE', 'a body over 64 KiB is 413 PAYLOAD_TOO_LARGE');
{
    my $sent = 0;
    my $chunks = sub { return undef if $sent >= 80; $sent++; return 'x' x 1024 };
    ($res, $v) = api('POST', '/quotes', agent_headers($key2), $chunks);
    is_json_error($res, $v, 413, 'PAYLOAD_TOO_LARGE', '... also when sent chunked, without a Content-Length');
}
($res, $v) = post_json('/quotes', agent_headers($key2), '{"sku":"' . ('A' x 65000) . '"}');
is_json_error($res, $v, 400, 'VALIDATION_ERROR', 'a body just under 64 KiB is read (and validated)');

# ---- several child processes serve the tests ----
my $pidfile = Apache::Test::vars('t_logs') . '/httpd.pid';
open my $pf, '<', $pidfile or die "$pidfile: $!";
chomp(my $ppid = <$pf>);
my @kids;
for my $proc (glob '/proc/[0-9]*') {
    open my $st, '<', "$proc/stat" or next;
    my $line = <$st> // next;
    my ($ppid_of) = $line =~ /\)\s+\S+\s+(\d+)/;
    push @kids, $proc if defined $ppid_of && $ppid_of == $ppid;
}
cmp_ok(scalar @kids, '>=', 2, 'httpd runs several child processes (' . scalar(@kids) . ')');

# ---- no agent key in any log line ----
my @logs = glob(Apache::Test::vars('t_logs') . '/*_log');
my @hits;
for my $log (@logs) {
    open my $fh, '<', $log or next;
    while (<$fh>) { push @hits, "$log: $_" if /_sk_test_[A-Za-z0-9]{6}/ }
}
ok(@logs >= 2, 'the error and access logs were read');
is_deeply(\@hits, [], 'no log line holds an agent key');

done_testing();
