# WebAuthn challenges stay few (issue 59): every look at a confirmation or
# enrolment link used to add a challenge row, with a write lock and a sync,
# and expired ones went only when one was used: the agent, who holds the
# link, doubled the database in seconds. Now a page's challenge is reused
# while it has as long to live as a new one would, a confirmation or an
# enrolment has at most two live ones however often its link is fetched, and
# the sweep deletes expired ones without any being used. A registration whose
# attestation declares more CBOR than it holds is refused before anything is
# allocated for it. (Approving with a reused challenge: t/api/passkey.t.)
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use JSON::PP ();
use MIME::Base64 ();
use Apache::Test ();
use Apache::TestRequest ();
use AgentShop::Test;

my $port = (split /:/, Apache::TestRequest::hostport())[1];
my $origin = "http://localhost:$port";
local $AgentShop::Test::BASE = '/pk/v1';

my ($p, $off) = buyable_offer(category => 'printer-ink', min_stock => 2);
ok($p, "an in-stock printer supply ($p->{sku})");
my ($user, $key) = new_agent();
new_mandate($user, categories => 'printer-ink', confirm_above => '0.01');
# a passkey on file, so that the page offers one (nothing here asks it to sign)
sql_write("INSERT INTO passkeys (id, user_id, alg, public_key, sign_count, created_at) "
        . "VALUES ('cred-$$', '$user', -7, 'AAAA', 0, 0)");

sub rows_of { (sql("SELECT COUNT(*) FROM webauthn_challenges WHERE subject_id = '$_[0]'"))[0][0] }
sub live_of {
    my ($subject) = @_;
    my $now = time;
    return (sql("SELECT COUNT(*) FROM webauthn_challenges WHERE subject_id = '$subject' AND expires_at > $now"))[0][0];
}
sub b64url { (my $s = MIME::Base64::encode_base64($_[0], '')) =~ tr{+/}{-_}; $s =~ s/=+$//; $s }

# Fetches the link n times as JSON and n times as a page: the challenges seen.
sub looks {
    my ($path, $n) = @_;
    my %seen;
    for (1 .. $n) {
        my (undef, $v) = api_get($path);
        $seen{ $v->{approval}{passkey}{challenge} // $v->{publicKey}{challenge} // 'none' }++;
        my ($res) = api('GET', $path, [ Accept => 'text/html' ]);
        $seen{ $res->content =~ /"challenge":"([\w-]+)"/ ? $1 : 'none' }++;
    }
    return \%seen;
}

# ---- a confirmation link fetched again and again ----
# (not within seconds of a step: the checks below count on one step's time)
my $to_step = 300 - time % 300;
sleep $to_step + 1 if $to_step < 20;
my (undef, $q) = post_json('/quotes', agent_headers($key), { sku => $p->{sku}, offer_id => $off->{offer_id} });
my ($res, $v) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => "ch$$"),
                          { quote_id => $q->{id}, reason => 'Toner for the office printer.' });
is($res->code, 202, 'an order waits for the person') or diag $res->content;
my ($path, $conf) = ($v->{confirmation}{url} // '') =~ m{/pk/v1((/confirmations/(conf_\w+))\?token=.+)$}
    ? ($1, $3) : ();
ok($conf, "its confirmation ($conf)");

my $seen = looks($path, 40);
ok(!$seen->{none}, '80 looks (JSON and page) each offer a challenge') or diag explain $seen;
cmp_ok(scalar keys %$seen, '<=', 2, '... at most two different ones') or diag explain $seen;
cmp_ok(rows_of($conf), '<=', 2, '... and the database holds at most two for the confirmation');
my ($first) = sort { $seen->{$b} <=> $seen->{$a} } keys %$seen;
(undef, $v) = api_get($path);
my $ms = $v->{approval}{passkey}{timeout_ms} // 0;
ok($ms > 300_000 && $ms <= 600_000, "the page has 5 to 10 minutes to answer it ($ms ms)");

# Five minutes on: the challenge has less time left than a new one would have.
my ($exp) = map { $_->[0] } sql("SELECT expires_at FROM webauthn_challenges WHERE challenge = '$first'");
sql_write("UPDATE webauthn_challenges SET expires_at = expires_at - 300 WHERE subject_id = '$conf'");
$seen = looks($path, 10);
my @new = grep { $_ ne $first } keys %$seen;
is(scalar @new, 1, 'five minutes on, one new challenge is offered') or diag explain $seen;
is($seen->{ $new[0] // '' }, 20, '... to every look after it');
is(live_of($conf), 2, '... two live ones');
# Five minutes more: the first expired, the second ages, a third comes.
sql_write("UPDATE webauthn_challenges SET expires_at = expires_at - 300 WHERE challenge = '$first'");
sql_write("UPDATE webauthn_challenges SET expires_at = expires_at - 300 WHERE challenge = '$new[0]'");
looks($path, 5);
is(live_of($conf), 2, 'five minutes more: still two live ones');

# ---- an enrolment link fetched again and again ----
my $e = ctl('user', 'enrol', $user, '--base-url', "$origin/pk/v1");
my ($epath, $enr) = $e->{path} =~ m{^(/enrol/(enr_\w+)\?token=.+)$};
my %eseen;
for (1 .. 40) {
    my (undef, $ev) = api_get($epath);
    $eseen{ $ev->{publicKey}{challenge} // 'none' }++;
}
ok(!$eseen{none}, '40 looks at an enrolment link each offer a challenge');
cmp_ok(scalar keys %eseen, '<=', 2, '... at most two different ones') or diag explain \%eseen;
cmp_ok(rows_of($enr), '<=', 2, "... and leave at most two in the database ($enr)");

# ---- expired challenges go without any being used ----
my $past = time - 60;
sql_write("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1200) "
        . "INSERT INTO webauthn_challenges (challenge, purpose, subject_id, expires_at) "
        . "SELECT 'old-$$-' || i, 'approve', 'conf_gone$$', $past - i FROM n");
is(rows_of("conf_gone$$"), 1200, '1200 expired challenges of a confirmation gone by');
my $left;
for (1 .. 40) {   # the sweep runs at most once a second per process, on a request
    api_get('/webauthn.js');
    $left = rows_of("conf_gone$$") + (sql("SELECT COUNT(*) FROM webauthn_challenges WHERE challenge = '$first'"))[0][0];
    last unless $left;
    select(undef, undef, undef, 0.25 * slow());
}
is($left, 0, 'the sweep deletes them, and the expired one of the link, with no challenge used');
cmp_ok(live_of($conf), '>=', 1, '... and keeps the live ones');

# ---- an attestation declaring 2^27 items in 9 bytes ----
sub max_child_hwm {
    my $pidfile = Apache::Test::vars('t_logs') . '/httpd.pid';
    open my $fh, '<', $pidfile or return;
    chomp(my $parent = <$fh>);
    my $max;
    for my $stat (glob '/proc/[0-9]*/stat') {
        open my $s, '<', $stat or next;
        my @f = split ' ', (<$s> // '');
        next unless @f > 3 && $f[3] == $parent;
        (my $status = $stat) =~ s/stat$/status/;
        open my $st, '<', $status or next;
        while (<$st>) { $max = $1 if /^VmHWM:\s+(\d+)/ && (!defined $max || $1 > $max) }
    }
    return $max;
}
my $hwm0 = max_child_hwm();
ok(defined $hwm0, "httpd's children's peak memory can be read ($hwm0 kB)");
my $e2 = ctl('user', 'enrol', $user, '--base-url', "$origin/pk/v1");
my ($e2path, $e2id, $e2token) = $e2->{path} =~ m{^(/enrol/(enr_\w+))\?token=(.+)$};
(undef, $v) = api_get("$e2path?token=$e2token");
my $challenge = $v->{publicKey}{challenge};
my $cd = b64url(JSON::PP->new->canonical->encode({ type => 'webauthn.create', challenge => $challenge,
                                                    origin => $origin }));
for my $att ("\x9b\x00\x00\x00\x00\x08\x00\x00\x00", "\xa1\x68authData\x9b\x00\x00\x00\x00\x08\x00\x00\x00") {
    ($res, $v) = post_json($e2path, [ 'Content-Type' => 'application/json' ],
                           { token => $e2token, client_data => $cd, attestation => b64url($att) });
    is_json_error($res, $v, 400, 'VALIDATION_ERROR', 'an attestation declaring 2^27 items: 400');
    like($v->{message} // '', qr/not a CBOR map|no authenticator data/, '... it is not an attestation');
}
my $hwm1 = max_child_hwm();
cmp_ok(($hwm1 // 0) - $hwm0, '<', 256 * 1024, "... and no child's peak memory grew for it ($hwm0 -> $hwm1 kB)");
is((sql("SELECT COUNT(*) FROM webauthn_challenges WHERE challenge = '$challenge' AND used_at IS NULL"))[0][0], 1,
   '... the challenge is still unused');

done_testing();
