# AgentShopConfirmationNotify (issue 17): one JSON line per confirmation
# created, after its commit, to a program httpd starts like a piped log and
# restarts when it dies, so the operator can mail or text the link to the
# person. The test server's program (t/bin/notify-sink) writes the first line
# it reads to t/logs/notify.log with its pid, and exits.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use JSON::PP ();
use Apache::Test ();
use AgentShop::Test;

my $log = Apache::Test::vars('serverroot') . '/logs/notify.log';

# The line naming confirmation $id, once it shows: (pid, decoded JSON).
sub notice_of {
    my ($id) = @_;
    for (1 .. 100) {
        if (open my $fh, '<', $log) {
            while (my $l = <$fh>) {
                next unless index($l, $id) >= 0;
                my ($pid, $json) = $l =~ /^(\d+) (.*)$/;
                return ($pid, eval { JSON::PP->new->decode($json) }, $l);
            }
        }
        select undef, undef, undef, 0.1;
    }
    return ();
}
sub lines_with { my ($id) = @_; open my $fh, '<', $log or return 0; scalar grep { index($_, $id) >= 0 } <$fh> }

my ($user, $key) = new_agent();
new_mandate($user, categories => 'printer-ink', confirm_above => '0.01');
my ($p, $off) = buyable_offer(category => 'printer-ink', min_stock => 3);
ok($p, "a printer supply ($p->{sku})");
my $reason = 'Toner for the office printer, best-ranked verified offer.';

sub quote { (post_json('/quotes', agent_headers($key), { sku => $p->{sku}, offer_id => $off->{offer_id} }))[1]{id} }
sub order {
    my ($idem, $quote) = @_;
    return post_json('/orders', agent_headers($key, 'Idempotency-Key' => $idem), { quote_id => $quote, reason => $reason });
}

my $q1 = quote();
my ($res, $v) = order("nt$$-1", $q1);
is($res->code, 202, 'an order that waits for the person');
my $c = $v->{confirmation};
my ($pid1, $n, $raw) = notice_of($c->{id});
ok($n, 'the notify program got a line for its confirmation') or diag `cat $log`;
is($n->{event}, 'confirmation_created', '... confirmation_created');
is($n->{confirmation_id}, $c->{id}, '... its id');
is($n->{order_id}, $v->{order_id}, '... the order');
is($n->{user}, $user, '... whose it is');
is($n->{url}, $c->{url}, '... the link to give the person');
is($n->{expires_at}, $c->{expires_at}, '... until when');
is($n->{total_cents}, $off->{price_cents}, '... the total');
is($n->{item}{sku}, $p->{sku}, '... the item');
is($n->{reason}, $reason, "... and the agent's reason");
like($raw, qr/^\d+ \{.*\}\n\z/, '... as one line of JSON');

# The same request again (a retry): the order is not placed twice, nobody is told twice.
($res) = order("nt$$-1", $q1);
is($res->header('Idempotent-Replayed'), 'true', 'a retry with the same key is a replay');
select undef, undef, undef, 0.5;
is(lines_with($c->{id}), 1, '... and sends no second line');

# The program exits after each line: httpd starts it again for the next one.
($res, $v) = order("nt$$-2", quote());
is($res->code, 202, 'another order that waits');
my ($pid2, $n2) = notice_of($v->{confirmation}{id});
ok($n2, 'its line arrives too');
isnt($pid2, $pid1, '... through a new program: httpd restarted the one that died');

done_testing();
