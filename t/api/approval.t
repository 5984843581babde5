# A human's approval re-checks the world (issue 17): an order that waited for
# a person is placed only if its mandate is still active and within its dates
# and its month's budget still holds it, and the agent key that placed it was
# not revoked meanwhile. Otherwise the approval is refused (403
# MANDATE_INVALID naming why), and the order is declined with its budget and
# stock given back.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use AgentShop::Test;

my ($p, $off) = buyable_offer(category => 'printer-ink', min_stock => 6);
ok($p, "an in-stock printer supply ($p->{sku})");
my $reason = 'Toner for the office printer, best-ranked verified offer.';
my $n = 0;

sub stock { (sql("SELECT stock FROM offers WHERE id = '$off->{offer_id}'"))[0][0] }
sub spent { my ($user) = @_; (sql("SELECT COALESCE(SUM(budget_cents), 0) FROM orders WHERE user_id = '$user'"))[0][0] }

# A user whose every order waits for a human; returns (user, key, key id, mandate).
sub careful_user {
    my ($user, $key, $key_id) = new_agent();
    my $md = new_mandate($user, categories => 'printer-ink', confirm_above => '0.01');
    return ($user, $key, $key_id, $md);
}

# An order waiting for approval: (order id, confirmation path, token).
sub pending {
    my ($key) = @_;
    my (undef, $q) = post_json('/quotes', agent_headers($key), { sku => $p->{sku}, offer_id => $off->{offer_id} });
    my ($res, $v) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => "ap$$-" . ++$n),
                              { quote_id => $q->{id}, reason => $reason });
    is($res->code, 202, 'the order waits for a human') or diag $res->content;
    my ($path, $token) = $v->{confirmation}{url} =~ m{/v1(/confirmations/[^?]+)\?token=(.+)$};
    return ($v->{order_id}, $path, $token);
}

sub approve {
    my ($path, $token) = @_;
    return post_json($path, [ 'Content-Type' => 'application/json' ], { decision => 'approve', token => $token });
}

sub order_status {
    my ($id) = @_;
    return (sql("SELECT status FROM orders WHERE id = '$id'"))[0][0];
}

# Checks a refused approval: the error, the order declined, budget and stock back.
sub refused {
    my ($what, $user, $id, $path, $token, $stock0, $why) = @_;
    my ($res, $v) = approve($path, $token);
    is_json_error($res, $v, 403, 'MANDATE_INVALID', "$what: the approval is refused");
    like($v->{message} // '', $why, '... naming why');
    is(order_status($id), 'declined', '... the order is declined, not placed');
    is(stock(), $stock0, '... its stock is given back');
    is(spent($user), 0, '... and its budget released');
    ($res, $v) = api_get("$path?token=$token");
    is($v->{status}, 'declined', '... the confirmation says declined');
    ($res, $v) = approve($path, $token);
    is_json_error($res, $v, 409, 'CONFIRMATION_DECIDED', '... and a second approval changes nothing');
}

# ---- the mandate revoked while the order waited ----
{
    my ($user, $key) = careful_user();
    my $stock0 = stock();
    my ($id, $path, $token) = pending($key);
    is(stock(), $stock0 - 1, 'the waiting order holds a unit');
    revoke_active($user);
    refused('mandate revoked', $user, $id, $path, $token, $stock0, qr/revoked/);
}

# ---- the mandate past its last day ----
{
    my ($user, $key, undef, $md) = careful_user();
    my $stock0 = stock();
    my ($id, $path, $token) = pending($key);
    sql_write("UPDATE mandates SET valid_until = '2020-01-31' WHERE id = '$md->{id}'");
    refused('mandate expired', $user, $id, $path, $token, $stock0, qr/expired after 2020-01-31/);
}

# ---- the month's budget no longer holds it (the limit lowered behind it) ----
{
    my ($user, $key, undef, $md) = careful_user();
    my $stock0 = stock();
    my ($id, $path, $token) = pending($key);
    my $limit = $off->{price_cents} - 1;
    sql_write("UPDATE mandates SET monthly_limit_cents = $limit WHERE id = '$md->{id}'");
    refused('monthly limit', $user, $id, $path, $token, $stock0, qr/monthly budget/);
}

# ---- the agent key revoked while the order waited ----
{
    my ($user, $key, $key_id) = careful_user();
    my $stock0 = stock();
    my ($id, $path, $token) = pending($key);
    ctl('key', 'revoke', $key_id);
    refused('key revoked', $user, $id, $path, $token, $stock0, qr/agent key .*was revoked/);
}

# ---- nothing changed: the approval places the order ----
{
    my ($user, $key) = careful_user();
    my $stock0 = stock();
    my ($id, $path, $token) = pending($key);
    my ($res, $v) = approve($path, $token);
    is($res->code, 200, 'with nothing changed the approval is accepted') or diag $res->content;
    is($v->{order_status}, 'placed', '... and the order placed');
    is(stock(), $stock0 - 1, '... holding its unit');
    is(spent($user), $off->{price_cents}, '... and its budget');
}

# ---- a refusal on the page a person sees ----
{
    my ($user, $key) = careful_user();
    my ($id, $path, $token) = pending($key);
    revoke_active($user);
    my ($res) = api('POST', $path, [ 'Content-Type' => 'application/x-www-form-urlencoded',
                                     Accept => 'text/html' ], "decision=approve&token=$token");
    is($res->code, 403, 'approving on the page: 403');
    like($res->header('Content-Type'), qr{^text/html}, '... as a page');
    like($res->content, qr/can no longer be approved: Mandate \S+ has been revoked\./,
         '... that tells the person why');
    is(order_status($id), 'declined', '... the order declined');
}

done_testing();
