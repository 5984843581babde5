# A human approval no agent can give (issue 17): under AgentShopApproval
# passkey (the default; here /pk/v1), an order above the confirm-above
# threshold is approved only with a WebAuthn assertion from one of the
# person's passkeys over a single-use challenge bound to that confirmation.
# The agent's bare POST with the signed link is refused and the order keeps
# waiting; declining needs the link alone. The person enrols a passkey on a
# one-time link (agentshopctl user enrol). The browser parts run in headless
# Chromium with a virtual authenticator (t/js/passkey-browser.mjs).
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use JSON::PP ();
use Apache::Test ();
use Apache::TestRequest ();
use AgentShop::Test;

my ($node, $top, $artifacts) = browser_tools();
unless ($node) { done_testing(); exit; }
my $script = "$top/t/js/passkey-browser.mjs";

my $port = (split /:/, Apache::TestRequest::hostport())[1];
my $base = "http://localhost:$port/pk/v1";
local $AgentShop::Test::BASE = '/pk/v1';

my ($p, $off) = buyable_offer(category => 'printer-ink', min_stock => 8);
ok($p, "an in-stock printer supply ($p->{sku})");
my $reason = 'Toner for the office printer, best-ranked verified offer.';
my $n = 0;

sub person {
    my ($user, $key) = new_agent();
    new_mandate($user, categories => 'printer-ink', confirm_above => '0.01');
    return ($user, $key);
}

# An order waiting for the person: (order id, confirmation URL).
sub pending {
    my ($key) = @_;
    my (undef, $q) = post_json('/quotes', agent_headers($key), { sku => $p->{sku}, offer_id => $off->{offer_id} });
    my ($res, $v) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => "pk$$-" . ++$n),
                              { quote_id => $q->{id}, reason => $reason });
    is($res->code, 202, 'an order waits for the person') or diag $res->content;
    like($v->{confirmation}{url} // '', qr{^\Q$base\E/confirmations/conf_\w+\?token=}, '... with a link on the shop\'s address');
    return ($v->{order_id}, $v->{confirmation}{url});
}

sub link_path {
    my ($url) = @_;
    my ($path, $token) = $url =~ m{/pk/v1(/confirmations/[^?]+)\?token=(.+)$};
    return ($path, $token);
}

sub order_status { (sql("SELECT status FROM orders WHERE id = '$_[0]'"))[0][0] }

my ($a_user, $a_key) = person();
my ($b_user, $b_key) = person();

# ---- before any passkey: the agent cannot approve, the page says why ----
my ($o0, $u0) = pending($a_key);
my ($path0, $token0) = link_path($u0);
my ($res, $v) = post_json($path0, [ 'Content-Type' => 'application/json' ], { decision => 'approve', token => $token0 });
is_json_error($res, $v, 403, 'PASSKEY_REQUIRED', "the agent's bare POST with the signed link: 403 PASSKEY_REQUIRED");
like($v->{message}, qr/passkey/, '... saying a passkey is needed');
is(order_status($o0), 'awaiting_confirmation', '... and the order still waits');
($res, $v) = api_get("$path0?token=$token0");
is($v->{approval}{method}, 'passkey', 'the JSON view says approving takes a passkey');
ok(!$v->{approval}{passkey_enrolled}, '... that the person has none yet');
like($v->{approval}{message} // '', qr/enrolment link/, '... and how to get one');
($res) = api('GET', "$path0?token=$token0", [ Accept => 'text/html' ]);
like($res->content, qr/none is registered/, 'the page says no passkey is registered');
unlike($res->content, qr/id="approve"/, '... offers no Approve button');
like($res->content, qr/value="decline"/, '... but Decline');
($res, $v) = post_json($path0, [ 'Content-Type' => 'application/json' ], { decision => 'decline', token => $token0 });
is($res->code, 200, 'declining by the link alone: 200') or diag $res->content;
is(order_status($o0), 'declined', '... the order declined');

# ---- enrolment links ----
my $ea = ctl('user', 'enrol', $a_user, '--base-url', $base);
like($ea->{url}, qr{^\Q$base\E/enrol/enr_\w+\?token=[\w-]{43}$}, 'agentshopctl user enrol prints a one-time link');
my $eb = ctl('user', 'enrol', $b_user, '--base-url', $base);
# the token's first character changed (to X, or to Y when it was X: 1 in 64)
(my $bad = $ea->{path}) =~ s/token=(.)/'token=' . ($1 eq 'X' ? 'Y' : 'X')/e;
isnt($bad, $ea->{path}, 'a link with its token altered');
($res, $v) = api_get($bad);
is_json_error($res, $v, 404, 'NOT_FOUND', 'an enrolment link with a wrong token: 404');
is((sql("SELECT COUNT(*) FROM enrolments WHERE token_hash LIKE '%" . substr($ea->{url}, -43) . "%'"))[0][0], 0,
   'the token is stored only as a hash');

# What only the browser would otherwise fetch, as a client would.
($res) = api('GET', '/webauthn.js');
is($res->code, 200, 'the pages\' script');
like($res->header('Content-Type') // '', qr{^text/javascript}, '... as JavaScript');
like($res->content, qr/navigator\.credentials\.create/, '... that registers passkeys');
my $ec = ctl('user', 'enrol', $b_user, '--base-url', $base, '--hours', 1);
my ($epath, $etoken) = $ec->{path} =~ m{^(/enrol/[^?]+)\?token=(.+)$};
($res, $v) = api_get($ec->{path});
is($res->code, 200, 'the enrolment options as JSON');
is($v->{publicKey}{rp_id}, 'localhost', '... for this shop\'s host');
is($v->{publicKey}{user_verification}, 'required', '... user verification required');
is_deeply($v->{publicKey}{algorithms}, [ -7, -8, -257 ], '... ES256, Ed25519, RS256');
($res, $v) = post_json($epath, [ 'Content-Type' => 'application/json' ], { token => $etoken, client_data => 'e30', attestation => 'oA' });
is_json_error($res, $v, 400, 'VALIDATION_ERROR', 'a made-up credential: 400');
($res, $v) = post_json($epath, [ 'Content-Type' => 'application/json' ], { token => 'wrong-token-1234', client_data => 'e30', attestation => 'oA' });
is_json_error($res, $v, 404, 'NOT_FOUND', 'with a wrong token: 404');

my ($o1, $u1) = pending($a_key);   # approved on the page
my ($o2, $u2) = pending($a_key);   # B's passkey tried on it
my ($o3, $u3) = pending($a_key);   # approved by an assertion posted as JSON
my ($o4, $u4) = pending($a_key);   # the same assertion replayed on it
my ($o5, $u5) = pending($a_key);   # declined on the page

my $plan = { enrol_a => $ea->{url}, enrol_b => $eb->{url}, approve => $u1, looks => 10, foreign => $u2,
             replay_from => $u3, replay_to => $u4, decline => $u5, shots => $artifacts };
my ($rc, $out, $r) = run_node($node, "$artifacts/passkey.log", $script, JSON::PP->new->encode($plan));
is($rc, 0, 'the browser ran') or diag "exit $rc: " . substr($out // '', 0, 3000);
my $s = $r->{steps} // {};

# 1. enrolment
for my $who (qw(a b)) {
    my $e = $s->{"enrol_$who"} // {};
    is($e->{status}, 200, "enrolment page of $who opens");
    like($e->{csp} // '', qr/script-src 'self'/, '... under a CSP with only its own script');
    is($e->{post_status}, 201, '... a passkey is registered (201)') or diag explain $e;
    like($e->{shown} // '', qr/Passkey registered/, '... and the page says so');
    is($e->{again_status}, 404, '... the link works once');
}
is($r->{credentials}, 2, 'the authenticator holds two passkeys');
my $pk = ctl('user', 'passkeys', $a_user);
is(scalar @{ $pk->{passkeys} }, 1, "agentshopctl user passkeys lists A's one passkey");
is($pk->{passkeys}[0]{id}, $s->{enrol_a}{body}{passkey}{id}, '... the one registered');

# 2. approved on the page
my $ap = $s->{approve} // {};
is($ap->{status}, 200, 'the confirmation page opens');
ok((grep { /Approve with your passkey/ } @{ $ap->{buttons} // [] }), '... with "Approve with your passkey"');
is($ap->{status_after}, 200, '... approving with the passkey: 200') or diag explain $ap;
like($ap->{notice} // '', qr/Approved\. The order is placed\./, '... the page says approved');
is(order_status($o1), 'placed', '... and the order is placed');
my ($conf1) = $u1 =~ m{(conf_\w+)};
my %offered;
$offered{ $_ // 'none' }++ for @{ $ap->{challenges} // [] }, $ap->{challenge};
ok(!$offered{none} && keys %offered <= 2, '... 21 looks at it (page and JSON) were offered one challenge (two at a step\'s turn)')
  or diag explain $ap;
cmp_ok((sql("SELECT COUNT(*) FROM webauthn_challenges WHERE subject_id = '$conf1'"))[0][0], '<=', 2,
       '... which the database keeps, at most two');
my @used = map { $_->[0] } sql("SELECT challenge FROM webauthn_challenges WHERE subject_id = '$conf1' AND used_at IS NOT NULL");
is_deeply(\@used, [ $ap->{challenge} // 'none' ], '... the approval answered the one the page offered, now used');
my $count = (sql("SELECT sign_count FROM passkeys WHERE user_id = '$a_user'"))[0][0];
cmp_ok($count, '>', 0, "... the passkey's counter is kept ($count)");

# 2b. declined on the page
is($s->{decline}{status_after}, 200, 'declining on the page needs no passkey: 200') or diag explain $s->{decline};
like($s->{decline}{notice} // '', qr/Declined/, '... the page says declined');
is(order_status($o5), 'declined', '... and the order is declined');

# 3. another person's passkey
my $f = $s->{foreign} // {};
is($f->{status}, 403, "B's passkey on A's purchase: 403") or diag explain $f;
is($f->{body}{error}, 'PASSKEY_REQUIRED', '... PASSKEY_REQUIRED');
like($f->{body}{message} // '', qr/not one of the passkeys/, '... not one of the person\'s passkeys');
is(order_status($o2), 'awaiting_confirmation', '... the order still waits');

# 4. a replayed assertion
is($s->{replay_first}{status}, 200, 'an assertion posted as JSON approves') or diag explain $s->{replay_first};
is(order_status($o3), 'placed', '... the order placed');
is($s->{replay_again}{status}, 403, 'the same assertion on another purchase: 403') or diag explain $s->{replay_again};
like($s->{replay_again}{body}{message} // '', qr/challenge/, '... its challenge was not issued for it');
is(order_status($o4), 'awaiting_confirmation', '... that order still waits');

# ---- the agent, even with everything it can see, cannot approve ----
my ($path4, $token4) = link_path($u4);
($res, $v) = api_get("$path4?token=$token4");
ok($v->{approval}{passkey}{challenge}, 'the JSON view hands out a challenge');
($res, $v) = post_json($path4, [ 'Content-Type' => 'application/json' ], { decision => 'approve', token => $token4,
    credential_id => $s->{enrol_a}{body}{passkey}{id}, client_data => 'e30', authenticator_data => 'AAAA', signature => 'AAAA' });
is_json_error($res, $v, 403, 'PASSKEY_REQUIRED', 'an agent posting a made-up assertion: 403');
is(order_status($o4), 'awaiting_confirmation', '... the order still waits');

done_testing();
