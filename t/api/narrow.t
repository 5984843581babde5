# People's pages on a phone (docs/buying.md, "The page"; docs/api.md, help
# pages): headless Chromium, driven by t/js/narrow-browser.mjs, opens them
# at a 375 px wide viewport as a person opens a link (Chromium's own Accept
# header). Every page fits the width (document.documentElement.scrollWidth
# <= 375); on the confirmation pages and their error pages every button and
# link is at least 44 px high; a cut-off or wrong link shows a page that says
# so, with its status, not the JSON; the confirmation page shows its expiry
# with the zone and how long is left, and the delivery date. Screenshots in
# t/artifacts/narrow-*.png.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use Apache::Test ();
use Apache::TestRequest ();
use JSON::PP;
use AgentShop::Test;

once_per_run("A page's layout at 375 px");

binmode(Test::More->builder->$_, ':encoding(UTF-8)') for qw(output failure_output todo_output);

my ($node, $top, $artifacts) = browser_tools();
unless ($node) { done_testing(); exit; }
my $script = "$top/t/js/narrow-browser.mjs";
my $origin = 'http://' . Apache::TestRequest::hostport();

my ($user, $key) = new_agent();
my $H = agent_headers($key);
my ($p, $off) = buyable_offer(category => 'printer-ink', min_stock => 4);
ok($p, "an in-stock printer supply ($p->{sku})");
new_mandate($user, categories => 'printer-ink', per_order => 1000, monthly => 5000,
            confirm_above => sprintf('%.2f', ($off->{price_cents} - 1) / 100));
my $n = 0;

sub pending_order {
    my ($res, $q) = post_json('/quotes', $H, { sku => $p->{sku}, offer_id => $off->{offer_id} });
    ($res, my $v) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => "narrow-$$-" . ++$n),
                              { quote_id => $q->{id},
                                reason => 'Toner for the office printer: the best-ranked verified offer, '
                                  . 'with a reason long enough to wrap over several lines on a phone.' });
    is($res->code, 202, 'an order waits for a human') or diag $res->content;
    return $v;
}

my $link = pending_order();                 # AgentShopApproval link: Approve and Decline
my $decided = pending_order();
my ($dpath, $dtoken) = $decided->{confirmation}{url} =~ m{/v1(/confirmations/[^?]+)\?token=(.+)$};
my ($res) = post_json($dpath, [ 'Content-Type' => 'application/json' ], { decision => 'approve', token => $dtoken });
is($res->code, 200, 'another one approved');
my $passkey = do { local $AgentShop::Test::BASE = '/pk/v1'; pending_order() };    # no passkey: Decline only

my $url = $link->{confirmation}{url};
(my $no_token = $url) =~ s/\?.*//;
my @codes = do {
    my ($r) = api_get('/docs/errors');
    my %seen;
    grep { !$seen{$_}++ } $r->content =~ m{docs/errors/([A-Z_]+)"}g;
};
ok(@codes >= 20, scalar(@codes) . ' error codes listed on the errors page');

my %shot = map { $_ => 1 } qw(confirm-pending confirm-passkey confirm-approved bad-cut docs checkout errors
                              error-CONFIRMATION_INVALID error-IDEMPOTENCY_KEY_REQUIRED);
my @pages = (
    [ 'confirm-pending',  $url, 200 ],
    [ 'confirm-passkey',  $passkey->{confirmation}{url}, 200 ],
    [ 'confirm-approved', $decided->{confirmation}{url}, 200 ],
    [ 'bad-cut',          substr($url, 0, length($url) - 12), 404 ],
    [ 'bad-no-token',     $no_token, 404 ],
    [ 'bad-unknown-id',   $url =~ s{/confirmations/conf_\w+}{/confirmations/conf_nosuch}r, 404 ],
    [ 'docs',             "$origin/v1/docs", 200 ],
    [ 'docs-slash',       "$origin/v1/docs/", 200 ],
    [ 'checkout',         "$origin/v1/docs/checkout", 200 ],
    [ 'errors',           "$origin/v1/docs/errors", 200 ],
    (map { [ "error-$_", "$origin/v1/docs/errors/$_", 200 ] } @codes),
);
my $spec = [ map { { name => $_->[0], url => $_->[1], shot => $shot{ $_->[0] } ? JSON::PP::true : JSON::PP::false } } @pages ];

unlink glob "$artifacts/narrow-*.png";
my ($rc, $out, $r) = run_node($node, "$artifacts/narrow.log", $script,
                              JSON::PP->new->utf8->encode($spec), $artifacts);
is($rc, 0, 'the browser ran') or diag "exit $rc: " . substr($out // '', 0, 3000);
my %seen = map { $_->{name} => $_ } @{ $r->{pages} // [] };

for my $pg (@pages) {
    my ($name, $u, $status) = @$pg;
    my $s = $seen{$name} // {};
    is($s->{status}, $status, "$name: $status") or diag $u;
    like($s->{content_type} // '', qr{^text/html}, '... an HTML page');
    like($s->{csp} // '', qr/default-src 'none'/, '... under the strict CSP');
    ok(defined $s->{scrollWidth} && $s->{scrollWidth} <= 375 && $s->{clientWidth} == 375,
       "... fits 375 px: scrollWidth " . ($s->{scrollWidth} // 'none'));
    next unless $name =~ /^(confirm|bad)-/;
    my @small = grep { $_->{visible} && $_->{height} < 44 } @{ $s->{targets} // [] };
    is_deeply(\@small, [], '... every button and link is at least 44 px high ('
              . join(', ', map { "$_->{tag} $_->{height}" } @{ $s->{targets} // [] }) . ')');
    ok(-s "$artifacts/narrow-$name.png", "... screenshot $artifacts/narrow-$name.png") if $shot{$name};
}

my $human = qr/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4}/;
my $c = $seen{'confirm-pending'} // {};
like($c->{expires}{text} // '', qr/$human, \d\d:\d\d UTC$/, "the page shows the expiry with its zone: " . ($c->{expires}{text} // 'nothing'));
is($c->{expires}{datetime}, $link->{confirmation}{expires_at}, '... the same time as the API\'s expires_at');
like($c->{expires}{line} // '', qr/ UTC \(in 2[34] hours\)$/, '... and how long is left: ' . ($c->{expires}{line} // 'nothing'));
like($c->{delivery}{text} // '', qr/$human$/, 'the delivery date: ' . ($c->{delivery}{line} // 'nothing'));
is($c->{delivery}{datetime}, $link->{order}{delivery_by}, '... the order\'s delivery_by');
like($c->{delivery}{line} // '', qr/^by .+ \((today|tomorrow|in \d+ days)\), if you approve now$/, '... with how far away it is');
unlike($c->{text} // '', qr/\d{4}-\d\d-\d\dT\d\d:\d\d/, '... and no raw timestamp anywhere on the page');
my @buttons = map { $_->{text} } grep { $_->{tag} eq 'button' } @{ $c->{targets} // [] };
is_deeply(\@buttons, [ 'Approve', 'Decline' ], '... with Approve and Decline');
my $pk = $seen{'confirm-passkey'} // {};
like($pk->{expires}{line} // '', qr/ UTC \(in 2[34] hours\)$/, 'the passkey page shows the expiry too');
my $ap = $seen{'confirm-approved'} // {};
is_deeply($ap->{h1}, [ 'Purchase approved' ], 'the approved purchase\'s page');
like($ap->{decided}{line} // '', qr/$human, \d\d:\d\d UTC \((just now|(less than a minute|1 minute) ago)\)$/, '... says when it was approved');
like($ap->{delivery}{line} // '', qr/^by .+ \((today|tomorrow|in \d+ days)\)$/, '... and when it arrives');

for my $bad (qw(bad-cut bad-no-token bad-unknown-id)) {
    my $b = $seen{$bad} // {};
    is_deeply($b->{h1}, [ 'This link does not work' ], "$bad: the page says the link does not work");
    unlike($b->{text} // '', qr/"error"\s*:/, '... in words, not JSON');
    like($b->{text} // '', qr/What you can do/, '... and says what to do');
}
is_deeply([ grep { /Content Security Policy|Refused/i } @{ $r->{console} // [] } ], [],
          'no page broke the CSP');

done_testing();
