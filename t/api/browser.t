# A real browser on the confirmation link (docs/buying.md, "Confirmation"):
# headless Chromium, driven by t/js/confirm-browser.mjs (playwright-core), opens
# the signed link of an order waiting for a human, sees item, price, agent and
# reason, clicks Approve (or Decline); the API then shows the order placed (or
# declined). Screenshots are kept in t/artifacts/confirmation-{approve,decline}.png
# (scripts/apache-test.sh copies them back when the suite ran from a copy).
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use Apache::Test ();
use JSON::PP;
use AgentShop::Test;

binmode(Test::More->builder->$_, ':encoding(UTF-8)') for qw(output failure_output todo_output);

my ($node, $top, $artifacts) = browser_tools();
unless ($node) { done_testing(); exit; }
my $script = "$top/t/js/confirm-browser.mjs";

my ($user, $key) = new_agent();
my $AGENT = 'browser-check/2.1';
# The agent's own name, shown to the person (agent_headers' default is test-agent/1.0).
sub headers {
    my (%extra) = @_;
    return [ Authorization => "Bearer $key", 'Service-Agent' => $AGENT,
             'Content-Type' => 'application/json', %extra ];
}
my $H = headers();
my ($p, $off) = buyable_offer(category => 'printer-ink', min_stock => 4);
ok($p, "an in-stock printer supply ($p->{sku})");
new_mandate($user, categories => 'printer-ink', per_order => 1000, monthly => 5000,
            confirm_above => sprintf('%.2f', ($off->{price_cents} - 1) / 100));
# Markup characters must reach the person as text, not as markup.
my $reason = 'Toner for the office printer: best-ranked verified offer, <b>not</b> the cheapest & fastest.';
my $n = 0;

# An order above the threshold: its 202 body.
sub pending_order {
    my ($res, $q) = post_json('/quotes', $H, { sku => $p->{sku}, offer_id => $off->{offer_id} });
    is($res->code, 201, 'a quote') or diag $res->content;
    ($res, my $v) = post_json('/orders', headers('Idempotency-Key' => "browser-$$-" . ++$n),
                              { quote_id => $q->{id}, reason => $reason });
    is($res->code, 202, 'the order waits for a human (202)') or diag $res->content;
    is($v->{error}, 'CONFIRMATION_REQUIRED', '... CONFIRMATION_REQUIRED');
    is($v->{docs}, 'docs/errors/CONFIRMATION_REQUIRED', '... with its help page');
    like($v->{confirmation}{url} // '', qr{^http://[^/]+/v1/confirmations/conf_\w+\?token=[\w-]{43}$},
         '... and the signed link');
    return $v;
}

# Runs the browser on the link; returns its report.
sub browse {
    my ($url, $decision, $expect) = @_;
    my $shot = "$artifacts/confirmation-$decision.png";
    unlink $shot, "$artifacts/confirmation-$decision-after.png";
    my ($rc, $out, $r) = run_node($node, "$artifacts/confirmation-$decision.log", $script, $url,
                                  $decision, $shot, JSON::PP->new->utf8->encode($expect));
    is($rc, 0, "the browser ran and every check passed ($decision)")
      or diag "exit $rc: " . substr($out // '', 0, 3000);
    return ($r, $shot);
}

sub is_png {
    my ($file, $name) = @_;
    my $head = '';
    if (open my $fh, '<:raw', $file) { read $fh, $head, 8 }
    ok(-s $file && -s $file > 2000 && $head eq "\x89PNG\r\n\x1a\n", $name)
      or diag "$file: " . (-s $file // 'missing');
}

my $price_text = sprintf "\x{20ac}%.2f", $off->{price_cents} / 100;
my %expect = (item => $p->{name}, price => $price_text, agent => $AGENT, reason => $reason);

for my $case ([ approve => 'placed', 'approved', 'Approved. The order is placed.' ],
              [ decline => 'declined', 'declined', 'Declined. The order will not be placed.' ]) {
    my ($decision, $order_status, $conf_status, $notice) = @$case;
    my $v = pending_order();
    last unless $v && $v->{confirmation};
    my ($r, $shot) = browse($v->{confirmation}{url}, $decision, \%expect);
    my $before = $r->{before} // {};
    my $after = $r->{after} // {};

    # What the person saw before clicking.
    is($r->{status_before}, 200, "$decision: the link opens (200)");
    like($r->{content_type} // '', qr{^text/html}, '... as a page');
    like($r->{csp} // '', qr/default-src 'none'.*form-action 'self'/, '... under the strict CSP');
    ok($r->{checks}{$_}, "... $_ visible: " . ($before->{$_}{text} // 'nothing'))
      for qw(item price agent reason);
    like($before->{item}{text} // '', qr/\Q$p->{name}\E \(\Q$p->{sku}\E\) \x{d7} 1/, '... the item with sku and quantity');
    like($before->{price}{text} // '', qr/^\Q$price_text\E total/, '... the price in euros');
    is($before->{agent}{text}, $AGENT, '... the agent, as its Service-Agent header named it');
    is($before->{reason}{text}, $reason, '... the reason, markup shown as text');
    is($before->{status}{text}, 'pending', '... pending');
    is_deeply($before->{buttons}, [ 'Approve', 'Decline' ], '... with Approve and Decline buttons');
    is_png($shot, "... a screenshot is kept: $shot");

    # The click, and what the page said afterwards.
    is($r->{status_after}, 200, "$decision: the form posts and answers 200");
    is($after->{url}, $v->{confirmation}{url} =~ s/\?.*//r, '... on the confirmation itself');
    is($after->{notice}, $notice, "... saying: $notice");
    is($after->{status}{text}, $conf_status, "... status $conf_status");
    is_deeply($after->{buttons}, [], '... and no buttons any more');
    is_deeply($r->{refused}, [], '... no request was refused or failed');
    is_deeply([ grep { /Content Security Policy|Refused/i } @{ $r->{console} // [] } ], [],
              '... and no CSP violation was reported');
    is_png($r->{screenshot_after} // '', '... a screenshot after the click too');

    # The API agrees.
    my ($res, $o) = api_get("/orders/$v->{order_id}", $H);
    is($res->code, 200, "GET /orders/$v->{order_id}");
    is($o->{status}, $order_status, "... the order is $order_status");
    is($o->{timeline}[-1]{status}, $order_status, '... and its timeline says so');
    is($o->{reason}, $reason, '... with the reason the person saw');
}

diag "screenshots: $artifacts/confirmation-approve.png, $artifacts/confirmation-decline.png";
done_testing();
