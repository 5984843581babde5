# What a person sees behind the confirmation link (docs/buying.md, "The
# page"), over HTTP: a browser's Accept gets a page for every error the link
# can answer (a cut-off or wrong link, a form that is not the page's, a
# decision already made, a cancelled order, an expired link, the rate limit,
# the database unavailable), with the same status and the HTML security
# headers; Accept: application/json, or none, gets the same error object as
# before. The page itself shows its expiry as a person reads it, with the zone
# and how long is left, and the delivery date.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use POSIX qw(strftime floor);
use Time::Local qw(timegm);
use Apache::Test ();
use AgentShop::Test;

# The pages are the module's, whatever the database: on PostgreSQL the link's
# transitions are t/api/confirm.t's and t/api/browser.t's (and .ci/run keeps
# its time).
plan skip_all => 'the pages do not depend on the database (make test and make test-asan run this)' if is_pg();

binmode(Test::More->builder->$_, ':encoding(UTF-8)') for qw(output failure_output todo_output);

# Chromium's Accept for a page it navigates to.
my $BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,'
  . 'image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7';
my $FORM = 'application/x-www-form-urlencoded';

my ($user, $key) = new_agent();
my $H = agent_headers($key);
my ($p, $off) = buyable_offer(category => 'printer-ink', min_stock => 6);
ok($p, "an in-stock printer supply ($p->{sku})");
new_mandate($user, categories => 'printer-ink', per_order => 1000, monthly => 5000,
            confirm_above => sprintf('%.2f', ($off->{price_cents} - 1) / 100));
my $reason = 'Toner for the office printer, best-ranked verified offer.';
my $n = 0;

# An order waiting for a human on the current base: (path, token, 202 body).
sub pending_order {
    my ($res, $q) = post_json('/quotes', $H, { sku => $p->{sku}, offer_id => $off->{offer_id} });
    ($res, my $v) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => "cp$$-" . ++$n),
                              { quote_id => $q->{id}, reason => $reason });
    is($res->code, 202, 'an order above the threshold waits for a human') or diag $res->content;
    my ($path, $token) = ($v->{confirmation}{url} // '') =~ m{/v1(/confirmations/[^?]+)\?token=(.+)$};
    return ($path, $token, $v);
}

sub iso_time {
    my ($s) = @_;
    my ($y, $mo, $d, $h, $mi, $se) = $s =~ /^(\d+)-(\d+)-(\d+)T(\d+):(\d+):(\d+)Z$/ or return;
    return timegm($se, $mi, $h, $d, $mo - 1, $y);
}
# "Sat 28 Nov 2026", as the page writes a day (no leading zero).
sub human_day { my @t = gmtime shift; return sprintf '%s %d %s', strftime('%a', @t), $t[3], strftime('%b %Y', @t) }
sub text_of { my ($html) = @_; $html =~ s/<[^>]*>//g; return $html }

# What a person reads for each code (core/views/as_buy_view.c).
my %HEADING = (
    CONFIRMATION_INVALID => 'This link does not work',
    VALIDATION_ERROR     => 'The shop could not read this request',
    RATE_LIMITED         => 'Too many attempts',
    SERVICE_UNAVAILABLE  => 'The shop cannot answer right now',
);

# The HTML headers write_response sets for every page.
sub page_headers_ok {
    my ($res, $name) = @_;
    like($res->header('Content-Type') // '', qr{^text/html; charset=utf-8}, "$name: a page")
      or diag substr($res->content, 0, 300);
    like($res->header('Content-Security-Policy') // '',
         qr/default-src 'none'; script-src 'self';.*form-action 'self'; frame-ancestors 'none'/,
         '... under the strict CSP');
    is($res->header('Referrer-Policy'), 'no-referrer', '... Referrer-Policy: no-referrer');
    is($res->header('X-Content-Type-Options'), 'nosniff', '... nosniff');
    is($res->header('Cache-Control'), 'no-store', '... no-store');
}

# One request three ways: a browser gets the page, Accept: application/json
# and no Accept get the error object, the same one. Returns the page's
# response.
sub each_way {
    my ($method, $path, $headers, $body, $status, $code, $name) = @_;
    my ($json, $jv) = api($method, $path, [ Accept => 'application/json', @$headers ], $body);
    is_json_error($json, $jv, $status, $code, "$name: application/json gets $status $code");
    my ($none, $nv) = api($method, $path, [@$headers], $body);
    is_json_error($none, $nv, $status, $code, '... so does a client that sends no Accept');
    my @same = $code eq 'RATE_LIMITED' ? qw(error docs) : qw(error message docs field);
    is_deeply({ map { $_ => $nv->{$_} } grep { exists $nv->{$_} } @same },
              { map { $_ => $jv->{$_} } grep { exists $jv->{$_} } @same }, '... the same object');
    my ($res) = api($method, $path, [ Accept => $BROWSER, @$headers ], $body);
    is($res->code, $status, "... a browser gets the same status, $status");
    page_headers_ok($res, '...');
    my $html = $res->content;
    like($html, qr/^<!DOCTYPE html>/, '... an HTML page, not the JSON');
    unlike($html, qr/"error"\s*:/, '... without the error object in it');
    unlike($html, qr/<script/i, '... and without a script');
    if (my $h = $HEADING{$code}) {
        like($html, qr{<h1>\Q$h\E</h1>}, "... saying: $h");
        like($html, qr{<h2>What you can do</h2>\n<p id="todo">[^<]{20,}</p>}, '... and what the person can do');
        like($html, qr{error <code>\Q$code\E</code>, HTTP status $status}, '... naming the code for support');
        like($html, qr{<a id="docs" href="http://[^"]+/v1/docs/errors/\Q$code\E">}, '... with its help page');
    }
    return $res;
}

# ---- the page: expiry with the zone and how long is left, delivery date ----
my ($path, $token, $v) = pending_order();
my ($res) = api('GET', "$path?token=$token", [ Accept => $BROWSER ]);
is($res->code, 200, 'a browser opens the link: 200');
page_headers_ok($res, 'the confirmation page');
my $html = $res->content;
utf8::decode($html);
my $expires = $v->{confirmation}{expires_at};
my $exp_t = iso_time($expires);
my $human = human_day($exp_t) . strftime(', %H:%M UTC', gmtime $exp_t);
like($html, qr{<dt>Link valid until</dt><dd><time id="expires" datetime="\Q$expires\E">\Q$human\E</time> \(in 2[34] hours\)</dd>},
     "... the link is valid until $human (in 23 hours; 24 within its first second), with a machine-readable datetime");
my $delivery = $v->{order}{delivery_by};
my ($dy, $dm, $dd) = $delivery =~ /^(\d+)-(\d+)-(\d+)$/;
my $d_t = timegm(0, 0, 0, $dd, $dm - 1, $dy);
my $days = floor($d_t / 86400) - floor(time / 86400);
my $rel = $days == 0 ? 'today' : $days == 1 ? 'tomorrow' : "in $days days";
my $dhuman = human_day($d_t);
like($html, qr{<dt>Delivery</dt><dd>by <time id="delivery" datetime="\Q$delivery\E">\Q$dhuman\E</time> \(\Q$rel\E\), if you approve now</dd>},
     "... the delivery date: by $dhuman ($rel)");
unlike(text_of($html), qr/\d{4}-\d\d-\d\dT\d\d:\d\d/, '... and no raw timestamp in the text a person reads');
like($html, qr/button\{[^}]*min-height:44px/, '... buttons styled at least 44 px high');

# ---- a name that would reorder the line: isolated ----
# A right-to-left override in a product's name (written straight into the
# database, as one older than the feed's rules may hold it) would make the
# rest of the item's line, quantity and merchant, read backwards: the name is
# in an element of its own, <bdi>, and so is the merchant's; the title, where
# no element can isolate, shows the name without it.
{
    my ($old) = map { $_->[0] } sql("SELECT name FROM products WHERE sku = '$p->{sku}'");
    (my $q_old = $old) =~ s/'/''/g;
    sql_write("UPDATE products SET name = 'Toner \xe2\x80\xae 01 x srewop' WHERE sku = '$p->{sku}'");
    my ($path2, $token2) = pending_order();
    my ($res2) = api('GET', "$path2?token=$token2", [ Accept => $BROWSER ]);
    my $page = $res2->content;
    utf8::decode($page);
    sql_write("UPDATE products SET name = '$q_old' WHERE sku = '$p->{sku}'");
    like($page, qr{<dd id="item"><bdi id="item-name">Toner \x{202E} 01 x srewop</bdi> \(\Q$p->{sku}\E\) &times; 1, from <bdi id="item-merchant">[^<>\x{202A}-\x{202E}\x{2066}-\x{2069}]+</bdi></dd>},
         'a product name with a bidi override: isolated in its own <bdi> on the item\'s line, the merchant too')
      or diag(($page =~ m{(<dd id="item">.*?</dd>)}s)[0] // substr($page, 0, 600));
    my ($title) = $page =~ m{<title>(.*?)</title>}s;
    like($title // '', qr/^Approve a purchase: Toner\s+01 x srewop$/, '... and the title shows the name without the override')
      or diag $title;
}

# ---- a cut-off, changed or wrong link ----
my ($id) = $path =~ m{/confirmations/(.+)$};
my @bad = (
    [ "$path?token=" . substr($token, 0, 20), 'a token cut off by a mail client' ],
    [ "$path?token=" . substr($token, 0, 5),  'a token cut to 5 characters' ],
    [ $path,                                  'a link without its token' ],
    [ "$path?token=${token}x",                'a token with a character added' ],
    [ '/confirmations/' . substr($id, 0, 9) . "?token=$token", 'an id cut off' ],
    [ "/confirmations/conf_nosuch?token=$token", 'an unknown id' ],
    [ "$path?token=$token&utm_source=mail",   'a link a mail client added a parameter to' ],
);
for my $b (@bad) {
    each_way('GET', $b->[0], [], undef, 404, 'CONFIRMATION_INVALID', "GET $b->[1]");
}
$res = each_way('GET', '/confirmations/%3Cb%3Econf?token=x%3Cb%3E12345', [], undef, 404, 'CONFIRMATION_INVALID',
                'GET an id and a token with markup in them');
unlike($res->content, qr/<b>/, '... which the page does not repeat');
each_way('GET', "$path?token=%zz", [], undef, 400, 'VALIDATION_ERROR', 'GET a link with a broken escape in its query');
each_way('GET', '/confirmations/conf_%zz?token=x', [], undef, 400, 'VALIDATION_ERROR',
         'GET a link with a broken escape in its path (refused by httpd)');

# The form, as only a page that is not ours would post it.
each_way('POST', $path, [ 'Content-Type' => $FORM ], "token=$token", 400, 'VALIDATION_ERROR',
         'POST the form without a decision');
each_way('POST', $path, [ 'Content-Type' => $FORM ], 'decision=approve&token=' . ('A' x 43), 404,
         'CONFIRMATION_INVALID', 'POST the form with a wrong token');
my ($put, $pv) = api('PUT', "$path?token=$token", [ Accept => $BROWSER ]);
is_json_error($put, $pv, 405, 'METHOD_NOT_ALLOWED', 'PUT (no browser sends it from a link) keeps the error object, 405');
is((api_get("$path?token=$token"))[1]{status}, 'pending', 'none of this changed the confirmation');

# ---- decided: a second, different decision ----
($res) = post_json($path, [ 'Content-Type' => 'application/json' ], { decision => 'approve', token => $token });
is($res->code, 200, 'approved (JSON)');
($res, $v) = post_json($path, [ 'Content-Type' => 'application/json', Accept => 'application/json' ],
                      { decision => 'decline', token => $token });
is_json_error($res, $v, 409, 'CONFIRMATION_DECIDED', 'declining afterwards, as an API client: 409 CONFIRMATION_DECIDED');
($res) = api('POST', $path, [ 'Content-Type' => $FORM, Accept => $BROWSER ], "decision=decline&token=$token");
is($res->code, 409, '... in the browser: 409');
page_headers_ok($res, '...');
like($res->content, qr{<p role="status"><strong>This purchase was already approved\.</strong></p>}, '... saying it was already approved');
($res) = api('GET', "$path?token=$token", [ Accept => $BROWSER ]);
like($res->content, qr{<h1>Purchase approved</h1>}, 'the link then shows the purchase approved');
like($res->content, qr{<dt>Delivery</dt><dd>by <time id="delivery" datetime="\Q$delivery\E">[^<]+</time> \([^)]+\)</dd>},
     '... with its delivery date');
like($res->content, qr{<dt>Approved</dt><dd><time id="decided"[^>]*>[^<]+ UTC</time> \((just now|(less than a minute|1 minute) ago)\)},
     '... and when, instead of how long the link lives');

# ---- the agent cancelled the order ----
($path, $token, $v) = pending_order();
my $order_id = $v->{order_id};
($res) = post_json("/orders/$order_id/cancel", $H, '');
is($res->code, 200, 'the agent cancels the order waiting for the person');
($res) = api('GET', "$path?token=$token", [ Accept => $BROWSER ]);
is($res->code, 200, 'the link still opens');
like($res->content, qr{<h1>Purchase not placed</h1>}, '... saying the purchase was not placed');
like($res->content, qr{<dd id="status">cancelled</dd>}, '... cancelled');
unlike($res->content, qr{id="delivery"}, '... with no delivery date: nothing will be delivered');
unlike($res->content, qr{<button}, '... and nothing to click');
like($res->content, qr{<dt>Cancelled</dt><dd><time id="decided"[^>]*>[^<]+ UTC</time>}, '... saying when');
($res, $v) = post_json($path, [ 'Content-Type' => 'application/json' ], { decision => 'approve', token => $token });
is_json_error($res, $v, 409, 'CONFIRMATION_DECIDED', 'approving it, as an API client: 409 CONFIRMATION_DECIDED');
($res) = api('POST', $path, [ 'Content-Type' => $FORM, Accept => $BROWSER ], "decision=approve&token=$token");
is($res->code, 409, '... in the browser: 409');
like($res->content, qr{This purchase was already cancelled\.}, '... saying it was cancelled');

# ---- expired (2 seconds on /fast/v1) ----
{
    local $AgentShop::Test::BASE = '/fast/v1';
    my ($fpath, $ftoken) = pending_order();
    sleep 3;
    ($res) = api('GET', "$fpath?token=$ftoken", [ Accept => $BROWSER ]);
    is($res->code, 200, 'an expired link still opens');
    like($res->content, qr{<h1>Purchase not placed</h1>}, '... saying the purchase was not placed');
    like($res->content, qr{<dd id="status">expired</dd>}, '... because the link expired');
    like($res->content, qr{<dt>Link expired</dt><dd><time id="expires"[^>]*>[^<]+ UTC</time> \((just now|(less than a minute|\d+ minutes?) ago)\)},
         '... which it says, with how long ago');
    ($res, $v) = post_json($fpath, [ 'Content-Type' => 'application/json', Accept => 'application/json' ],
                           { decision => 'approve', token => $ftoken });
    is_json_error($res, $v, 410, 'CONFIRMATION_EXPIRED', 'approving it, as an API client: 410 CONFIRMATION_EXPIRED');
    ($res) = api('POST', $fpath, [ 'Content-Type' => $FORM, Accept => $BROWSER ], "decision=approve&token=$ftoken");
    is($res->code, 410, '... in the browser: 410');
    page_headers_ok($res, '...');
    like($res->content, qr{This link has expired\. The order was not placed\.}, '... saying the link expired');
}

# ---- the rate limit (5 requests a minute per agent key on /limited/v1) ----
# A fresh key of its own, so the address's allowance t/api/limits.t counts on
# stays untouched; a person's browser would be counted by its address.
($path, $token) = pending_order();
{
    local $AgentShop::Test::BASE = '/limited/v1';
    my ($ru, $rk) = new_agent();
    my @as = (Authorization => "Bearer $rk");
    my $limited;
    for (1 .. 8) {
        ($res) = api('GET', "$path?token=$token", [ @as, Accept => 'application/json' ]);
        if ($res->code == 429) { $limited = 1; last }
    }
    ok($limited, 'the link, opened too often, is rate limited');
    $res = each_way('GET', "$path?token=$token", [@as], undef, 429, 'RATE_LIMITED', 'GET a rate-limited link');
    my $wait = $res->header('Retry-After') // 0;
    ok($wait >= 1 && $wait <= 60, "... with Retry-After ($wait s)");
    like($res->content, qr{<p id="todo">Wait \d+ seconds?, then try again\.</p>}, '... the page says how long to wait');
    like($res->content, qr{<a id="again" href="http://[^"]+/limited/v1\Q$path\E\?token=\Q$token\E">Try again</a>},
         '... and links to the same page to try again');
}

# ---- the database unavailable (SQLite: another process holds it) ----
SKIP: {
    # the same page as the rate limit's above, after two write waits per
    # request: not again under the sanitizers (.ci/run's time)
    skip 'the same page as the rate limit, after fixed waits (make test runs it)', 1 if !plain_run();
    local $AgentShop::Test::BASE = '/fast/v1';
    my ($spath, $stoken) = pending_order();
    my $db = Apache::Test::vars('serverroot') . '/var/agentshop.db';
    my $holder = fork // die "fork: $!";
    if (!$holder) {
        exec 'sqlite3', '-cmd', '.timeout 5000', '-cmd', 'BEGIN IMMEDIATE;', $db, '.shell sleep 40';
        exit 127;
    }
    sleep 3;    # holds the lock, and the link has expired: opening it must write
    $res = each_way('GET', "$spath?token=$stoken", [], undef, 503, 'SERVICE_UNAVAILABLE',
                    'GET an expired link while the database is unavailable');
    like($res->content, qr{<a id="again" href="http://[^"]+/fast/v1\Q$spath\E\?token=\Q$stoken\E">Try again</a>},
         '... the page links to the same page to try again');
    $res = each_way('POST', $spath, [ 'Content-Type' => $FORM ], "decision=decline&token=$stoken", 503,
                    'SERVICE_UNAVAILABLE', 'POST a decision while the database is unavailable');
    unlike($res->content, qr{id="again"}, '... no link to post again (its token was in the form)');
    kill 'TERM', $holder;
    waitpid $holder, 0;
    ($res, $v) = api_get("$spath?token=$stoken");
    is($v->{status}, 'expired', 'once the database is back, the link shows the confirmation expired');
}

done_testing();
