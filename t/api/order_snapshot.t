# An order keeps what was bought, and what cannot be sold is not placed
# (issue 59).
# 1. A merchant's feed renames a product and moves it to another category,
#    and renames the merchant, while an order of it waits for the person:
#    the order, the confirmation (JSON and page) and agentshopctl show the
#    name, category and merchant the order was placed with, and the approval
#    checks the mandate against the category it was placed in.
# 2. The feed withdraws the product while orders of it wait: approving with
#    the person's passkey (a software authenticator: an ES256 key made by
#    openssl, its assertion signed the way an authenticator signs) is
#    refused with 409 OUT_OF_STOCK saying what was withdrawn, the order is
#    declined, its budget and its units released.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use File::Temp qw(tempdir);
use JSON::PP ();
use MIME::Base64 qw(encode_base64);
use Digest::SHA qw(sha256);
use POSIX qw(strftime);
use Apache::Test ();
use Apache::TestRequest ();
use AgentShop::Test;

my $dir = tempdir(CLEANUP => 1);
chmod 0755, $dir;
my $json = JSON::PP->new->utf8->canonical;
my $reason = 'The charger the user asked for, best-ranked verified offer.';
my $n = 0;

# ---- the demo feed's records, to change and put back ----
my (%rec, %offers_of);
{
    open my $fh, '<:raw', Apache::Test::vars('serverroot') . '/../sql/demo/catalogue.jsonl' or die $!;
    while (my $line = <$fh>) {
        my $r = $json->decode($line);
        $rec{product}{ $r->{sku} } = $r if $r->{type} eq 'product';
        $rec{merchant}{ $r->{id} } = $r if $r->{type} eq 'merchant';
        push @{ $offers_of{ $r->{sku} } }, $r if $r->{type} eq 'offer';
    }
}

sub import_feed {
    my ($name, @recs) = @_;
    my $path = feed_file("$dir/$name.jsonl", @recs);
    my $cmd = ctl_argv('catalogue', 'import', $path);
    my $out = `$cmd 2>&1`;
    is($? >> 8, 0, "the feed $name imports") or diag $out;
    outside_write_shown();
}

# Products of a category with one offer in stock, from the demo file's end
# (other scripts take the first ones): (product record, offer view).
sub tail_products {
    my ($category, $count) = @_;
    my @found;
    for my $p (sort { $b->{sku} cmp $a->{sku} } grep { $_->{category} eq $category } values %{ $rec{product} }) {
        next if @{ $offers_of{ $p->{sku} } // [] } != 1;
        my (undef, $v) = api_get("/products/$p->{sku}");
        my ($off) = grep { $_->{stock} >= 3 } @{ $v->{offers}{ranked} // [] };
        push @found, [ $p, $off ] if $off && !product_is_contradicted($p);
        last if @found == $count;
    }
    return @found;
}
my @picked = sort { $a->[0]{sku} cmp $b->[0]{sku} } tail_products('chargers-cables', 2);
is(scalar @picked, 2, 'two chargers to buy') or BAIL_OUT('no chargers in stock');

sub one { my @r = sql($_[0]); return @r ? $r[0][0] : undef }

# A user whose every order waits for a person, allowed chargers only.
sub careful_user {
    my ($user, $key) = new_agent();
    new_mandate($user, categories => 'chargers-cables', confirm_above => '0.01');
    return ($user, $key);
}

# An order waiting for approval: (order id, confirmation path, token).
sub pending {
    my ($key, $off) = @_;
    my ($res, $q) = post_json('/quotes', agent_headers($key), { sku => $off->{sku}, offer_id => $off->{offer_id} });
    is($res->code, 201, "a quote for $off->{offer_id}") or diag $res->content;
    ($res, my $v) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => "snap$$-" . ++$n),
                              { quote_id => $q->{id}, reason => $reason });
    is($res->code, 202, '... its order waits for the person') or diag $res->content;
    my ($path, $token) = ($v->{confirmation}{url} // '') =~ m{/v1(/confirmations/[^?]+)\?token=(.+)$};
    return ($v->{order_id}, $path, $token);
}

# ---- 1. renamed and moved to another category while the order waits ----
{
    my ($p, $off) = @{ $picked[0] };
    $off->{sku} = $p->{sku};
    my $m = $rec{merchant}{ $offers_of{ $p->{sku} }[0]{merchant} };
    my ($user, $key) = careful_user();
    my ($id, $path, $token) = pending($key, $off);
    import_feed('rename', { %$p, name => 'Free sample - no charge', category => 'hand-soap' },
                { %$m, name => 'Renamed Merchant BV' });
    my (undef, $pv) = api_get("/products/$p->{sku}");
    is($pv->{name}, 'Free sample - no charge', 'the catalogue has the new name now');

    my ($res, $v) = api_get("/orders/$id", agent_headers($key));
    is($res->code, 200, 'the order: 200');
    is($v->{name}, $p->{name}, '... named as it was placed, not as the feed renamed it');
    is($v->{receipt}{item}, $p->{name}, '... on its receipt too');
    is($v->{merchant}, $m->{name}, '... from the merchant as it was named then');
    ($res, $v) = api_get("$path?token=$token");
    is($v->{item}{name}, $p->{name}, 'the confirmation (JSON) shows the name the order was placed with');
    is($v->{item}{merchant}, $m->{name}, '... and the merchant\'s');
    ($res) = api('GET', "$path?token=$token", [ Accept => 'text/html' ]);
    my $page = $res->content;
    like($page, qr/\Q${\ html_escape($p->{name}) }\E/, 'the page a person approves names what was ordered');
    unlike($page, qr/Free sample/, '... not the new name');
    unlike($page, qr/Renamed Merchant/, '... nor the merchant\'s new name');
    my $shown = ctl('order', 'show', $id);
    is($shown->{name}, $p->{name}, 'agentshopctl order show: the name it was placed with');
    my $cmd = ctl_argv('order', 'list', '--status', 'awaiting_confirmation');
    my ($line) = grep { $_->{id} eq $id } map { $json->decode($_) } grep { /\S/ } split /\n/, `$cmd`;
    is($line && $line->{name}, $p->{name}, 'agentshopctl order list: the same');

    # the mandate allows chargers, not hand soap: the category it was placed in counts
    ($res, $v) = post_json($path, [ 'Content-Type' => 'application/json' ], { decision => 'approve', token => $token });
    is($res->code, 200, 'approving: the mandate checks the category it was placed in') or diag $res->content;
    is($v->{order_status}, 'placed', '... and the order is placed');
    is($v->{order}{name}, $p->{name}, '... as what was approved');
    import_feed('rename-back', $p, $m);
}

# ---- 2. withdrawn while orders wait; approved with the person's passkey ----
local $AgentShop::Test::BASE = '/pk/v1';
my $port = (split /:/, Apache::TestRequest::hostport())[1];
my $origin = "http://localhost:$port";

sub b64url { (my $s = encode_base64($_[0], '')) =~ tr{+/}{-_}; $s =~ s/=+$//; return $s }
sub slurp { open my $fh, '<:raw', $_[0] or die "$_[0]: $!"; local $/; return <$fh> }
sub openssl { system('openssl', @_) == 0 or die "openssl @_ failed" }

# The person's passkey: an ES256 key, its public half registered for them
# (what enrolment stores); returns the credential id.
my $keyfile = "$dir/passkey.pem";
openssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', $keyfile);
openssl('ec', '-in', $keyfile, '-pubout', '-outform', 'DER', '-out', "$dir/passkey.der");
my $spki = b64url(slurp("$dir/passkey.der"));
my $counter = 0;
sub register_passkey {
    my ($user) = @_;
    my $cred = b64url("cred-$user");
    sql_write("INSERT INTO passkeys (id, user_id, alg, public_key, sign_count, created_at) VALUES "
              . "('$cred', '$user', -7, '$spki', 0, " . time . ')');
    return $cred;
}

# The assertion an authenticator gives for the page's challenge: user present
# and verified, the counter moved on, signed over authenticatorData and the
# client data's hash.
sub assertion {
    my ($cred, $challenge) = @_;
    my $cd = $json->encode({ type => 'webauthn.get', challenge => $challenge, origin => $origin });
    my $auth = sha256('localhost') . chr(0x05) . pack('N', ++$counter);
    open my $fh, '>:raw', "$dir/signed" or die $!;
    print $fh $auth . sha256($cd);
    close $fh;
    openssl('dgst', '-sha256', '-sign', $keyfile, '-out', "$dir/sig", "$dir/signed");
    return (credential_id => $cred, client_data => b64url($cd), authenticator_data => b64url($auth),
            signature => b64url(slurp("$dir/sig")));
}

sub stock { one("SELECT stock FROM offers WHERE id = '$_[0]'") }
sub spent { one("SELECT COALESCE(SUM(budget_cents), 0) FROM orders WHERE user_id = '$_[0]'") }

sub challenge_of {
    my ($path, $token) = @_;
    my (undef, $v) = api_get("$path?token=$token");
    return $v->{approval}{passkey}{challenge};
}

{
    my ($p, $off) = @{ $picked[1] };
    $off->{sku} = $p->{sku};
    my ($user, $key) = careful_user();
    my $cred = register_passkey($user);

    # the software authenticator approves while the product is sold
    my ($id0, $path0, $token0) = pending($key, $off);
    my ($res, $v) = post_json($path0, [ 'Content-Type' => 'application/json' ],
                              { decision => 'approve', token => $token0, assertion($cred, challenge_of($path0, $token0)) });
    is($res->code, 200, 'with the product on sale the passkey approves') or diag $res->content;
    is($v->{order_status}, 'placed', '... the order placed');

    my ($id1, $path1, $token1) = pending($key, $off);
    my ($id2, $path2, $token2) = pending($key, $off);
    my $placed_at = one("SELECT MIN(created_at) FROM orders WHERE id IN ('$id1', '$id2')");
    is(spent($user), 3 * $off->{price_cents}, 'three orders hold the budget');
    import_feed('withdraw', { type => 'product', sku => $p->{sku}, withdrawn => JSON::PP::true });
    ($res) = api_get("/products/$p->{sku}");
    is($res->code, 404, 'the product is withdrawn from sale');

    ($res, $v) = post_json($path1, [ 'Content-Type' => 'application/json' ],
                           { decision => 'approve', token => $token1, assertion($cred, challenge_of($path1, $token1)) });
    is_json_error($res, $v, 409, 'OUT_OF_STOCK', 'approving it after the withdrawal, with the passkey: refused');
    like($v->{message} // '', qr/can no longer be approved: \Q$p->{name}\E \(\Q$p->{sku}\E\) was withdrawn from sale/,
         '... saying what was withdrawn');
    is(one("SELECT status FROM orders WHERE id = '$id1'"), 'declined', '... the order declined, not placed');
    ($res, $v) = api_get("/orders/$id1", agent_headers($key));
    is($v->{status}, 'declined', '... which the agent reads');
    like($v->{timeline}[-1]{note} // '', qr/Approval refused: .*withdrawn from sale/, '... with why, on its timeline');
    ($res, $v) = api_get("$path1?token=$token1");
    is($v->{status}, 'declined', '... the confirmation declined');

    # on the page a person uses
    my %a = assertion($cred, challenge_of($path2, $token2));
    my $form = join '&', "decision=approve", "token=$token2", map { "$_=$a{$_}" } sort keys %a;
    ($res) = api('POST', $path2, [ 'Content-Type' => 'application/x-www-form-urlencoded', Accept => 'text/html' ], $form);
    is($res->code, 409, 'approving on the page: 409');
    like($res->header('Content-Type') // '', qr{^text/html}, '... as a page');
    like($res->content, qr/can no longer be approved: .*withdrawn from sale/, '... that tells the person why');
    is(one("SELECT status FROM orders WHERE id = '$id2'"), 'declined', '... the order declined');

    is(spent($user), $off->{price_cents}, 'their budget released: only the order placed before holds any');
    ($res, $v) = api_get('/mandates/current', agent_headers($key));
    is($v->{spent_this_month_cents}, $off->{price_cents}, '... as the agent\'s mandate says');
    # their units: a merchant's count from before them, on sale again, is not
    # reduced by orders that no longer hold units
    my $as_of = $placed_at - 1;
    my $first_holds = one("SELECT COUNT(*) FROM orders WHERE id = '$id0' AND created_at > $as_of");
    import_feed('relist', $p, map { { %$_, stock => 20, stock_as_of => strftime('%Y-%m-%dT%H:%M:%SZ', gmtime($as_of)) } }
                @{ $offers_of{ $p->{sku} } });
    is(stock($off->{offer_id}), 20 - $first_holds, '... and their units: none held by the declined orders');
    import_feed('restore', $p, @{ $offers_of{ $p->{sku} } });
}

sub html_escape {
    my ($s) = @_;
    $s =~ s/&/&amp;/g; $s =~ s/</&lt;/g; $s =~ s/>/&gt;/g; $s =~ s/"/&quot;/g; $s =~ s/'/&#39;/g;
    return $s;
}

done_testing();
