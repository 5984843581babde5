# Secrets that must not leave through httpd itself (issue 17): a confirmation
# link's token never reaches an access log, whatever its format (request line,
# path and query, QUERY_STRING, the Referer the page's own form sends); TRACE
# under /v1 is refused as JSON and does not echo the agent key back; the API
# is not mapped to files, so <Directory> rules do not reach it (its
# <Location> ones do).
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use Apache::Test ();
use Apache::TestRequest ();
use AgentShop::Test;

my $log = Apache::Test::vars('serverroot') . '/logs/tokens_log';

# The lines the log gained since $size bytes, once a line with $needle shows
# (httpd writes it when the response is done).
sub log_since {
    my ($size, $needle) = @_;
    for (1 .. 40) {
        open my $fh, '<', $log or die "$log: $!";
        seek $fh, $size, 0;
        local $/;
        my $new = <$fh> // '';
        return $new if index($new, $needle) >= 0;
        select undef, undef, undef, 0.05;
    }
    return '';
}

my ($user, $key) = new_agent();
my $H = agent_headers($key);
my ($p, $off) = buyable_offer(category => 'printer-ink', min_stock => 2);
new_mandate($user, categories => 'printer-ink', confirm_above => '0.01');
my (undef, $q) = post_json('/quotes', $H, { sku => $p->{sku}, offer_id => $off->{offer_id} });
my ($res, $v) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => "lg$$"),
                          { quote_id => $q->{id}, reason => 'Toner for the office, best verified offer.' });
is($res->code, 202, 'an order waiting for a human');
my ($path, $token) = $v->{confirmation}{url} =~ m{/v1(/confirmations/[^?]+)\?token=(.+)$};
ok($token && length $token >= 20, 'its link carries a token');

my $size = -s $log // 0;
($res, $v) = api_get("$path?token=$token");
is($res->code, 200, 'the link, opened');
is($v->{status}, 'pending', '... still works (the handler reads the real token)');
my $lines = log_since($size, $path);
like($lines, qr/\Q$path\E/, 'the access log has the request');
unlike($lines, qr/\Q$token\E/, '... but not the token, in any field');
like($lines, qr/"GET \/v1\Q$path\E\?token=\[masked\] HTTP/, '... the request line shows it masked');
like($lines, qr/ \/v1\Q$path\E\?token=\[masked\] "(token=\[masked\]|-)"$/m, '... and so does %U%q (QUERY_STRING, when set, too)');

# The page's form posts back from the link: the Referer would carry the token.
$size = -s $log;
($res) = api('POST', $path, [ 'Content-Type' => 'application/x-www-form-urlencoded', Accept => 'text/html',
                              Referer => "http://localhost/v1$path?token=$token" ], "decision=decline&token=$token");
is($res->code, 200, 'declining on the page');
is($res->header('Referrer-Policy'), 'no-referrer', '... whose pages tell browsers to send no Referer');
$lines = log_since($size, "POST /v1$path");
unlike($lines, qr/\Q$token\E/, "... and a Referer that carries the token is logged masked");
like($lines, qr/"http:\/\/localhost\/v1\Q$path\E\?token=\[masked\]"/, '... as [masked]');

# ---- TRACE ----
($res, $v) = api('TRACE', '/search?q=soap', [ Authorization => "Bearer $key", 'X-Secret' => 'trace-me' ]);
is($res->code, 405, 'TRACE under /v1: 405');
like($res->header('Content-Type') // '', qr{^application/json}, '... as JSON');
is($v->{error}, 'METHOD_NOT_ALLOWED', '... METHOD_NOT_ALLOWED');
unlike($res->content, qr/\Q$key\E|trace-me/, '... echoing no header back');
ok($res->header('Allow'), '... with Allow');
($res, $v) = api('TRACE', '', [ Authorization => "Bearer $key" ]);
is($res->code, 405, 'TRACE on the base itself: 405 too');
unlike($res->content, qr/\Q$key\E/, '... without the key');

# ---- no file-system mapping under /v1 ----
# t/conf/extra.conf.in denies <Directory DocumentRoot/v1>, made here (httpd
# walks only directories that exist): httpd does not walk the file system for
# the API, so the rule does not reach it...
my $dir = Apache::Test::vars('documentroot') . '/v1';
mkdir $dir or die "$dir: $!" unless -d $dir;
($res, $v) = api_get("/products/$p->{sku}");
rmdir $dir;
is($res->code, 200, 'a <Directory> denial over DocumentRoot/v1 does not apply to the API');
is($v->{sku}, $p->{sku}, '... the product is served');
# ... while a <Location> rule does, answered as JSON. Not through api(): the
# 403 is the operator's configuration, not the API's contract, so it is not
# one of the responses held to the OpenAPI document.
$res = Apache::TestRequest::GET('/v1/denied-by-location');
is($res->code, 403, 'a <Location> denial under /v1 applies: 403');
like($res->header('Content-Type') // '', qr{^application/json}, '... as JSON');
like($res->content, qr/"error":"FORBIDDEN"/, '... the error object');

done_testing();
