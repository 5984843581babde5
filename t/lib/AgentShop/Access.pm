package AgentShop::Access;
# The people of the access-control scripts (t/api/access*.t): Alice owns the
# resources; Mallory is another user with a valid key and a valid mandate of
# her own, so her refusals can only come from ownership. meet() makes both,
# with the offer they buy, and fills the variables below.
use strict;
use warnings;
use Exporter 'import';
use Test::More;
use AgentShop::Test;

our @EXPORT = qw(meet ikey quote_for order_for link_of one facts same_as_unknown no_leak
  $REASON $alice $akey $mallory $mkey $A $M $p $off $P $amd $mmd);

our $REASON = 'Access-control test order, best-ranked verified offer.';
our ($alice, $akey, $mallory, $mkey, $A, $M, $p, $off, $P, $amd, $mmd);

my $n = 0;
sub ikey { "acc-$$-" . ++$n }

# Both users, their headers and mandates, and an offer with stock: one unit is
# placed at once (exactly the threshold), two units wait for a human.
sub meet {
    ($alice, $akey) = new_agent();
    ($mallory, $mkey) = new_agent();
    ($A, $M) = (agent_headers($akey), agent_headers($mkey));
    ($p, $off) = buyable_offer(min_stock => 12, max_cents => 3000);
    ok($p, "an offer with stock ($off->{offer_id}, $off->{stock} units)") or die "no offer to buy\n";
    $P = $off->{price_cents};
    my $eur = sprintf '%.2f', $P / 100;
    $amd = new_mandate($alice, per_order => 1000, monthly => 5000, confirm_above => $eur);
    $mmd = new_mandate($mallory, per_order => 1000, monthly => 5000, confirm_above => $eur);
}

sub quote_for {
    my ($H, $qty) = @_;
    my ($res, $q) = post_json('/quotes', $H, { sku => $p->{sku}, offer_id => $off->{offer_id}, quantity => $qty // 1 });
    die 'quote failed: ' . $res->content unless $res->code == 201;
    return $q;
}

sub order_for {
    my ($key, $qty) = @_;
    my $q = quote_for(agent_headers($key), $qty);
    my ($res, $v) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => ikey()),
                              { quote_id => $q->{id}, reason => $REASON });
    die 'order failed: ' . $res->content unless $res->code == 201 || $res->code == 202;
    return $v;
}

sub link_of {
    my ($c) = @_;
    my ($path, $token) = $c->{confirmation}{url} =~ m{/v1(/confirmations/[^?]+)\?token=([A-Za-z0-9_-]+)$};
    return ($path, $token);
}

sub one { my ($r) = sql($_[0]); return $r ? $r->[0] : undef }

# What an attack must not change: the order's status, timeline, confirmation,
# returns and stock, the owner's budget (service view and database), and the
# totals of the tables an attack could write to.
sub facts {
    my (@ids) = @_;
    my %f;
    for my $id (@ids) {
        my ($o) = sql("SELECT status, budget_cents, updated_at, offer_id FROM orders WHERE id = '$id'");
        $f{$id} = {
            status       => $o->[0],
            budget_cents => $o->[1],
            updated_at   => $o->[2],
            stock        => one("SELECT stock FROM offers WHERE id = '$o->[3]'"),
            timeline     => join(',', map { "$_->[0]:$_->[1]" } sql("SELECT seq, status FROM order_events WHERE order_id = '$id' ORDER BY seq")),
            confirmation => one("SELECT status || '/' || COALESCE(CAST(decided_at AS TEXT), '-') FROM confirmations WHERE order_id = '$id'") // 'none',
            returns      => one("SELECT COUNT(*) FROM returns WHERE order_id = '$id'"),
        };
    }
    $f{alice_spent_api} = (api_get('/mandates/current', $A))[1]{spent_this_month_cents};
    $f{alice_spent_db} = one("SELECT COALESCE(SUM(budget_cents), 0) FROM orders WHERE mandate_id = '$amd->{id}'");
    $f{mallory_spent_db} = one("SELECT COALESCE(SUM(budget_cents), 0) FROM orders WHERE mandate_id = '$mmd->{id}'");
    $f{tables} = join ' ', map { "$_=" . one("SELECT COUNT(*) FROM $_") } qw(orders order_events confirmations returns questions);
    $f{stock_total} = one('SELECT SUM(stock) FROM offers');
    return \%f;
}

# A 404 for another user's id must be the 404 an unknown id gets.
sub same_as_unknown {
    my ($got, $unknown, $real_id, $fake_id, $name) = @_;
    ($got, $unknown) = ($got // {}, $unknown // {});    # a non-JSON answer fails here, not dies
    (my $msg = $unknown->{message} // '') =~ s/\Q$fake_id\E/$real_id/g;
    is_deeply([ @$got{qw(error field)}, $got->{message} ], [ @$unknown{qw(error field)}, $msg ],
              "$name: the same answer as for an id that does not exist");
}

sub no_leak {
    my ($res, $name) = @_;
    unlike($res->content, qr/\Q$alice\E|\Q$p->{sku}\E|\Q$amd->{id}\E|\Q$REASON\E/,
           "$name: the refusal shows nothing of Alice's (user, item, mandate, reason)");
}

1;
