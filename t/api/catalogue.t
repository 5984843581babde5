# The catalogue feed (docs/catalogue.md): its JSON Schema against real files,
# export -> import -> export byte for byte, every rejection named by line,
# field and reason with nothing written, --dry-run, re-importing changing
# nothing, and what an import does while httpd serves: a price, a new
# product, a contradiction and a withdrawal seen within a second, a quote's
# price kept, orders before a merchant's count subtracted from it, and the
# orders of a withdrawn product intact. Runs on either driver.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use File::Temp qw(tempdir);
use Time::HiRes qw(time sleep);
use POSIX qw(strftime);
use JSON::PP;
use AgentShop::Test;
use Apache::Test ();
use Apache::TestRequest ();
use LWP::UserAgent ();

my $top = Apache::Test::vars('serverroot') . '/..';
my $dir = tempdir(CLEANUP => 1);
chmod 0755, $dir;
my $json = JSON::PP->new->utf8->canonical;
my $demo = "$top/sql/demo/catalogue.jsonl";

# agentshopctl on the current test database ($AgentShop::Test::DB): (exit code, stdout, stderr)
sub run {
    my (@args) = @_;
    my $cmd = ctl_argv(@args);
    my $out = `$cmd 2>'$dir/err'`;
    my $rc = $? >> 8;
    open my $fh, '<', "$dir/err" or die $!;
    local $/;
    my $err = <$fh> // '';
    outside_write_shown();
    return ($rc, $out, $err);
}

sub import_file {
    my ($file, @opts) = @_;
    my ($rc, $out, $err) = run('catalogue', 'import', $file, @opts);
    my $summary = $rc == 0 ? eval { $json->decode($out) } : undef;
    return ($rc, $summary, $err);
}

sub write_feed {
    my ($name, @recs) = @_;
    return feed_file("$dir/$name.jsonl", @recs);
}

sub slurp {
    my ($path) = @_;
    open my $fh, '<:raw', $path or die "$path: $!";
    local $/;
    return <$fh>;
}

# the demo file's records, by type and key
my (%rec, @order);
for my $line (split /\n/, slurp($demo)) {
    my $r = $json->decode($line);
    my $k = $r->{type} eq 'offer' ? $r->{offer_id}
          : $r->{type} eq 'merchant' ? $r->{id}
          : $r->{type} eq 'device' ? $r->{slug}
          : $r->{type} eq 'compatibility' ? "$r->{sku} $r->{device}" : $r->{sku};
    $rec{ $r->{type} }{$k} = $r;
}

# ---- the JSON Schema, against the real files ----
my $schema = "$top/docs/catalogue.schema.json";
my $node = `cd '$top/t/js' && node feed-schema.mjs '$schema' '$demo' 2>&1`;
is($?, 0, 'the demo catalogue validates against docs/catalogue.schema.json') or diag $node;
like($node, qr/feed-schema: 1191 valid/, '... every one of its 1,191 records');
$node = `cd '$top/t/js' && node feed-schema.mjs '$schema' --invalid '$top/t/fixtures/feed-invalid.jsonl' 2>&1`;
is($?, 0, 'each bad record of t/fixtures/feed-invalid.jsonl fails the schema too') or diag $node;

# ---- export -> import -> export, on an empty database ----
{
    local $AgentShop::Test::DB = 'feed';
    my ($rc, $s, $err) = import_file($demo);
    is($rc, 0, 'the demo feed imports into an empty database') or diag $err;
    is($s->{changed}{product}, 186, '... 186 products');
    is($s->{changed}{offer}, scalar(keys %{ $rec{offer} }), '... every offer');
    is_deeply($s->{verification}, { verified => 127, pending => 38, contradicted => 21 },
              '... verification decided by the one rule: 127 verified, 38 pending, 21 contradicted');
    my ($xrc, undef, $xerr) = run('catalogue', 'export', "$dir/export1.jsonl");
    is($xrc, 0, 'catalogue export FILE') or diag $xerr;
    ok(slurp("$dir/export1.jsonl") eq slurp($demo), '... byte for byte the file imported');
    $node = `cd '$top/t/js' && node feed-schema.mjs '$schema' '$dir/export1.jsonl' 2>&1`;
    is($?, 0, '... and valid under the schema') or diag $node;
    my ($v1) = sql("SELECT value FROM meta WHERE key = 'search_catalogue'");
    ($rc, $s) = import_file("$dir/export1.jsonl");
    is($rc, 0, 'importing the export again');
    is_deeply($s->{changed}, {}, '... changes nothing');
    is($s->{unchanged}, 1191, '... every record unchanged');
    is($s->{search_index}, 'unchanged', '... so no index is built again');
    my ($v2) = sql("SELECT value FROM meta WHERE key = 'search_catalogue'");
    is($v2->[0], $v1->[0], '... and the catalogue keeps its number');
    ok(`${\ ctl_argv('catalogue', 'export')} 2>/dev/null` eq slurp($demo), 'catalogue export to stdout: the same bytes');
}

# ---- rejections: every problem, by line, nothing written ----
my @counts = map { $_->[0] } sql("SELECT (SELECT COUNT(*) FROM merchants) || ' ' || (SELECT COUNT(*) FROM products) || ' ' || (SELECT COUNT(*) FROM offers) || ' ' || (SELECT SUM(stock) FROM offers)");
my ($rc, $s, $err) = import_file("$top/t/fixtures/feed-invalid.jsonl");
is($rc, 1, 'a file of bad records: exit 1');
my @lines = $err =~ /feed-invalid\.jsonl:(\d+): /g;
my %seen = map { $_ => 1 } @lines;
is_deeply([ sort { $a <=> $b } keys %seen ], [ 1 .. 17 ], '... every one of its 17 lines named, in one pass');
like($err, qr/:1: country: must be one of NL, BE, DE, not "FR"/, '... with the field and the reason (a country)');
like($err, qr/:6: specs\[0\]\.kind: must be one of categorical, performance, info/, '... a nested field by its path');
like($err, qr/:7: nmae: is not a field of this record/, '... a misspelt field, not a silent default');
like($err, qr/:7: name: is missing/, '... and the field it left missing');
like($err, qr/:8: price_cents: must be a whole number/, '... a price as text');
like($err, qr/:14: price_cents: a withdrawal names only what it withdraws/, '... a withdrawal with more than its key');
like($err, qr/:17: not JSON/, '... a line that is not JSON');
like($err, qr/18 problems in .*; nothing was written/, '... counted, and nothing written');
is_deeply([ map { $_->[0] } sql("SELECT (SELECT COUNT(*) FROM merchants) || ' ' || (SELECT COUNT(*) FROM products) || ' ' || (SELECT COUNT(*) FROM offers) || ' ' || (SELECT SUM(stock) FROM offers)") ],
          \@counts, '... the database as it was');

# ---- hostile text: each kind of character in each text field, URLs that are
# not https, evidence too large; refused with the field and the character
# named, and nothing of the feed's raw controls on the operator's terminal ----
$node = `cd '$top/t/js' && node feed-schema.mjs '$schema' --invalid '$top/t/fixtures/feed-hostile.jsonl' 2>&1`;
is($?, 0, 'each record of t/fixtures/feed-hostile.jsonl fails the schema too') or diag $node;
($rc, $s, $err) = import_file("$top/t/fixtures/feed-hostile.jsonl");
is($rc, 1, 'a feed of hostile text: exit 1');
my @hostile = (
    [ 1, 'name', 'U\+202E, a bidirectional control', 'a right-to-left override in a merchant\'s name' ],
    [ 2, 'city', 'U\+001B, a control character', 'ESC in a city' ],
    [ 3, 'name', 'U\+007F, a control character', 'DEL' ],
    [ 4, 'name', 'U\+200B, a zero-width character', 'a zero-width space in a device\'s name' ],
    [ 5, 'aliases\[1\]', 'U\+2066, a bidirectional control', 'an isolate in an alias' ],
    [ 6, 'kind', 'U\+0085, a control character', 'a C1 control' ],
    [ 7, 'name', 'U\+000A, a control character.*only a description has line breaks', 'a newline in a product\'s name' ],
    [ 8, 'brand', 'U\+FEFF, a zero-width character', 'a byte order mark in a brand' ],
    [ 9, 'description', 'U\+000D, a control character.*a line break is \\\\n alone', 'CR in a description' ],
    [ 10, 'description', 'U\+2069, a bidirectional control', 'a bidi control in a description' ],
    [ 11, 'image_urls\[0\]', 'must be an https:// URL', 'a javascript: image' ],
    [ 12, 'image_urls\[0\]', 'must be an https:// URL', 'an http: image' ],
    [ 13, 'image_urls\[0\]', 'must be an https:// URL', 'a data: image' ],
    [ 14, 'source\.url', 'must be an https:// URL', 'an http: source' ],
    [ 15, 'specs\[0\]\.label', 'U\+0007, a control character', 'BEL in a specification\'s label' ],
    [ 16, 'specs\[0\]\.claimed', 'U\+200E, a bidirectional control', 'a mark in a claimed value' ],
    [ 17, 'price_label', 'U\+200D, a zero-width character', 'a zero-width joiner in a price label' ],
    [ 18, 'lab', 'U\+061C, a bidirectional control', 'the Arabic letter mark in a lab' ],
    [ 19, 'evidence', 'at most 16 objects', '17 evidence items' ],
    [ 20, 'evidence\[0\]', 'at most 1024', 'an evidence item of 1.1 KB' ],
);
for my $h (@hostile) {
    my ($n, $field, $why, $what) = @$h;
    like($err, qr/feed-hostile\.jsonl:$n: $field: .*$why/, "... $what: refused, the field named");
}
ok($err !~ /[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]/, '... and no raw control character in the error output (an ESC would drive the terminal)')
    or diag join "\n", grep { /[\x00-\x08\x0b-\x1f\x7f]/ } split /\n/, $err;
like($err, qr/feed-hostile\.jsonl:21: \\u001b\]0;owned\\u0007\\u001b\[2J: is not a field of this record/,
     '... a field named with ESC and BEL: shown escaped');
like($err, qr/feed-hostile\.jsonl:22: id: must be .*not "m-\\u001b\[2J\\u001b\]0;owned\\u0007"/,
     '... a merchant id with ESC quoted in the reason: escaped');
is_deeply([ map { $_->[0] } sql("SELECT (SELECT COUNT(*) FROM merchants) || ' ' || (SELECT COUNT(*) FROM products) || ' ' || (SELECT COUNT(*) FROM offers) || ' ' || (SELECT SUM(stock) FROM offers)") ],
          \@counts, '... nothing written');

($rc, $s, $err) = import_file("$top/t/fixtures/feed-refs.jsonl");
is($rc, 1, 'records that contradict each other or the database: exit 1');
like($err, qr/:1: sku: product ZZ-NOPE is neither in this file nor sold/, '... an offer of an unknown product');
like($err, qr/:2: merchant: merchant m-nowhere is neither/, '... of an unknown merchant');
like($err, qr/:3: values\.no_such_spec: product HS-0001 has no specification no_such_spec/, '... a measurement of a specification the product lacks');
like($err, qr/:4: withdraws offer ZZ-REF-NONE, which the database does not have/, '... a withdrawal of nothing');
like($err, qr/:5: sku: offer HS-0001-bolwerk is of another product: an offer never moves/, '... an offer moved to another product');
like($err, qr/:6: device: device no-such-device is neither/, '... a fit with an unknown device');
like($err, qr/:7: offer ZZ-REF-1 is also on line 1/, '... the same offer twice');
like($err, qr/:8: price_cents: the agent price \(130\) is above the retail price \(120\)/, '... an agent price above retail');
($rc, undef, $err) = run('catalogue', 'import', "$dir/no-such-file.jsonl");
ok($rc != 0 && $err =~ /cannot read .*no-such-file/, 'a file that cannot be read: refused, said');
($rc, undef, $err) = run('catalogue', 'import');
ok($rc != 0 && $err =~ /usage: catalogue import FILE\|- \[--dry-run\]/, 'no file: the usage');
($rc, undef, $err) = run('catalogue', 'import', $demo, '--force');
ok($rc != 0 && $err =~ /unexpected argument '--force'/, 'an unknown option: refused');
is_deeply([ map { $_->[0] } sql("SELECT (SELECT COUNT(*) FROM merchants) || ' ' || (SELECT COUNT(*) FROM products) || ' ' || (SELECT COUNT(*) FROM offers) || ' ' || (SELECT SUM(stock) FROM offers)") ],
          \@counts, 'after all of them, the database as it was');

# ---- a price change: --dry-run, then for real, seen within a second ----
my ($view, $off) = buyable_offer(category => 'hand-soap', min_stock => 5, max_cents => 2000);
ok($off, "an offer to change ($off->{offer_id} of $view->{sku})");
my $orig = $rec{offer}{ $off->{offer_id} };
my %changed = (%$orig, price_cents => $orig->{price_cents} - 7, stock => $off->{stock});
my $price_feed = write_feed('price', \%changed);
($rc, $s, $err) = import_file($price_feed, '--dry-run');
is($rc, 0, '--dry-run: exit 0') or diag $err;
ok($s->{dry_run} && $s->{changed}{offer} == 1, '... says what would change: one offer');
my ($db_price) = sql("SELECT price_cents FROM offers WHERE id = '$off->{offer_id}'");
is($db_price->[0], $off->{price_cents}, '... and writes nothing');

# a quote before the change keeps its price for its 10 minutes
my ($user, $key) = new_agent();
new_mandate($user, per_order => 200, monthly => 1000, confirm_above => 200);
my $H = agent_headers($key);
my ($res, $q) = post_json('/quotes', $H, { sku => $view->{sku}, offer_id => $off->{offer_id}, quantity => 2 });
is($res->code, 201, 'a quote at the old price') or diag $res->content;

# how long until every client sees it
sub last_stale_after {
    my ($t_ref, $path, $fresh) = @_;
    my $ua = LWP::UserAgent->new(keep_alive => 0, timeout => 10);
    my $url = 'http://' . Apache::TestRequest::hostport() . "/v1$path";
    my ($last, $n) = (undef, 0);
    while (time - $t_ref < 5 * slow()) {
        my $sent = time;
        my $res = $ua->get($url);
        if ($res->code == 200 && $fresh->($res->content)) {
            return defined $last ? $last - $t_ref : 0 if ++$n == 12;
        } else {
            ($last, $n) = ($sent, 0);
        }
    }
    return undef;
}

sub seen_within {
    my ($what, $check) = @_;
    my $t0 = time;
    while (time - $t0 < 5) {
        return time - $t0 if $check->();
        sleep 0.05;
    }
    return undef;
}

my $t0 = time;
($rc, $s, $err) = import_file($price_feed);
my $t_ret = time;
is($rc, 0, 'the price change imported') or diag $err;
is($s->{changed}{offer}, 1, '... one offer changed');
# the offer's price in a product view's body, or undef
sub price_in {
    my ($body, $offer_id) = @_;
    my $v = eval { $json->decode($body) } or return undef;
    my ($x) = grep { $_->{offer_id} eq $offer_id } @{ $v->{offers}{ranked} // [] };
    return $x ? $x->{price_cents} : undef;
}
my $took = seen_within('price', sub {
    my @b = bodies_everywhere("/products/$view->{sku}");
    !grep { (price_in($_, $off->{offer_id}) // -1) != $changed{price_cents} } @b;
});
ok(defined $took && time - $t0 < 1.5 * slow(), 'every child shows the new price in the product view within a second of the import'
   . (defined $took ? sprintf(' (%.2f s after it returned)', $took) : ' (never)'));
# searches on a new connection each (the children take turns), each stamped
# when sent: the last one that still showed the old price says when search
# caught up, counted from the import's return (then 12 fresh in a row)
$took = last_stale_after($t_ret, '/search?q=' . uri_escape_utf8($view->{name}) . '&limit=50',
                         sub { $_[0] =~ /"price_cents":\Q$changed{price_cents}\E\b/ });
ok(defined $took && $took < slow(), 'and in search results' . (defined $took ? sprintf(' (%.2f s after the import)', $took) : ' (never)'));
($res, my $o) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => "feed-$$-1"),
                          { quote_id => $q->{id}, reason => 'catalogue test: a quote before a price change' });
is($res->code, 201, 'the quote made before the change is ordered') or diag $res->content;
is($o->{unit_price_cents}, $off->{price_cents}, '... at the quoted price');
is($o->{total_cents}, 2 * $off->{price_cents}, '... and the quoted total');
($res, my $q2) = post_json('/quotes', $H, { sku => $view->{sku}, offer_id => $off->{offer_id} });
is($q2->{unit_price_cents}, $changed{price_cents}, 'a new quote has the new price');

# ---- stock as a merchant counts it ----
my $order_time = $o->{created_at};
my ($now_stock) = sql("SELECT stock FROM offers WHERE id = '$off->{offer_id}'");
is($now_stock->[0], $off->{stock} - 2, 'the order took its 2 units');
my $before_order = strftime('%Y-%m-%dT%H:%M:%SZ', gmtime(my $before_t = time - 120));
($rc, $s, $err) = import_file(write_feed('count1', { %changed, stock => 40, stock_as_of => $before_order }));
is($rc, 0, 'a stock count from before the order') or diag $err;
# the units of this offer's orders after a time that still hold stock (earlier
# test scripts may have ordered it too)
sub held_since {
    my ($t) = @_;
    my ($row) = sql("SELECT COALESCE(SUM(quantity), 0) FROM orders WHERE offer_id = '$off->{offer_id}' AND created_at > $t "
                    . "AND status NOT IN ('cancelled', 'declined', 'expired')");
    return $row->[0];
}
my $since_before = held_since($before_t);
cmp_ok($since_before, '>=', 2, "... $since_before units ordered since the count, our 2 among them");
($now_stock) = sql("SELECT stock FROM offers WHERE id = '$off->{offer_id}'");
is($now_stock->[0], 40 - $since_before, '... is the count less the units ordered since: nothing sold twice');
my $after_order = strftime('%Y-%m-%dT%H:%M:%SZ', gmtime(time + 1));
($rc, $s, $err) = import_file(write_feed('count2', { %changed, stock => 40, stock_as_of => $after_order }));
($now_stock) = sql("SELECT stock FROM offers WHERE id = '$off->{offer_id}'");
is($now_stock->[0], 40, 'a count from after it is taken as it is: the merchant counted the order already');
($res) = post_json("/orders/$o->{id}/cancel", $H, '');
is($res->code, 200, 'the order cancelled (its units back)') or diag $res->content;
($rc, $s, $err) = import_file(write_feed('count3', { %changed, stock => 40, stock_as_of => $before_order }));
($now_stock) = sql("SELECT stock FROM offers WHERE id = '$off->{offer_id}'");
is($now_stock->[0], 40 - held_since($before_t), '... a count from before an order placed and cancelled since: its units not subtracted');
is(held_since($before_t), $since_before - 2, '... (the cancelled order holds none)');

# ---- a lab's measurement that contradicts the claims ----
my ($victim) = grep {
    my $p = $_;
    $rec{measurement}{ $p->{sku} }
      && grep({ $_->{kind} eq 'performance' && defined $_->{claimed} && !ref $_->{claimed} && $_->{claimed} =~ /^[\d.]+$/ } @{ $p->{specs} })
      && (api_get("/products/$p->{sku}"))[1]{verification}{status} eq 'verified'
} map { $rec{product}{$_} } sort grep { $rec{product}{$_}{category} eq 'air-filters' } keys %{ $rec{product} };
my (undef, $pv) = api_get("/products/$victim->{sku}");
is($pv->{verification}{status}, 'verified', "a verified product ($victim->{sku})");
my ($perf) = grep { $_->{kind} eq 'performance' && defined $_->{claimed} && !ref $_->{claimed} } @{ $victim->{specs} };
my %m = %{ $rec{measurement}{ $victim->{sku} } };
$m{values} = { %{ $m{values} }, $perf->{spec} => $perf->{claimed} * 0.5 };
($rc, $s, $err) = import_file(write_feed('lab', \%m));
is($rc, 0, "a measurement of $perf->{spec} at half the claim imported") or diag $err;
is($s->{verification}{contradicted}, 1, '... the product is now contradicted (the summary says so)');
my $q_name = '/search?q=' . uri_escape_utf8($victim->{name}) . '&limit=50';
$took = seen_within('contradiction', sub {
    my (undef, $v) = api_get($q_name);
    !grep({ $_->{sku} eq $victim->{sku} } @{ $v->{results} }) && grep({ $_->{sku} eq $victim->{sku} } @{ $v->{excluded} });
});
ok(defined $took && $took < slow(), 'it leaves search results and appears in excluded within a second'
   . (defined $took ? sprintf(' (%.2f s)', $took) : ''));
(undef, $pv) = api_get("/products/$victim->{sku}");
is($pv->{verification}{status}, 'contradicted', '... and its view says contradicted');
($rc, $s) = import_file(write_feed('lab-back', $rec{measurement}{ $victim->{sku} }));
is($s->{verification}{verified}, 1, 'the lab corrects its measurement: verified again');

# ---- a new product, then withdrawn ----
my %new = (%{ $victim }, sku => "ZZ-NEW-$$", name => "Quokkaflux Test Filter $$");
my %new_offer = (%{ $rec{offer}{ (grep { $rec{offer}{$_}{sku} eq $victim->{sku} } sort keys %{ $rec{offer} })[0] } },
                 offer_id => "ZZ-NEW-$$-o", sku => $new{sku}, stock => 9);
($rc, $s, $err) = import_file(write_feed('new', \%new, \%new_offer));
is($rc, 0, 'a new product with an offer imported') or diag $err;
$took = seen_within('new product', sub {
    my (undef, $v) = api_get('/search?q=quokkaflux');
    grep { $_->{sku} eq $new{sku} } @{ $v->{results} // [] };
});
ok(defined $took && $took < slow(), 'search finds it within a second' . (defined $took ? sprintf(' (%.2f s)', $took) : ''));
($res, $pv) = api_get("/products/$new{sku}");
is($res->code, 200, '... and its view');
is($pv->{offers}{ranked}[0]{stock}, 9, '... with the stock the feed gave');

($res, $q) = post_json('/quotes', $H, { sku => $new{sku} });
($res, $o) = post_json('/orders', agent_headers($key, 'Idempotency-Key' => "feed-$$-2"),
                       { quote_id => $q->{id}, reason => 'catalogue test: an order before a withdrawal' });
is($res->code, 201, 'an order of it') or diag $res->content;
my (undef, $ov_before) = api_get("/orders/$o->{id}", $H);
($rc, $s, $err) = import_file(write_feed('withdraw', { type => 'product', sku => $new{sku}, withdrawn => JSON::PP::true }));
is($rc, 0, 'the product withdrawn') or diag $err;
is($s->{withdrawn}{product}, 1, '... the summary counts it');
$took = seen_within('withdrawal', sub {
    my ($r) = api_get("/products/$new{sku}");
    my (undef, $v) = api_get('/search?q=quokkaflux');
    $r->code == 404 && !grep { $_->{sku} eq $new{sku} } @{ $v->{results} // [] };
});
ok(defined $took && $took < slow(), 'its view is 404 and search no longer finds it, within a second'
   . (defined $took ? sprintf(' (%.2f s)', $took) : ''));
my ($ores, $ov) = api_get("/orders/$o->{id}", $H);
is($ores->code, 200, 'its order is still there');
is_deeply([ @$ov{qw(id status offer_id total_cents)} ], [ @$ov_before{qw(id status offer_id total_cents)} ],
          '... as it was');
($res) = post_json('/quotes', $H, { sku => $new{sku} });
is($res->code, 404, 'a quote of it: 404');
my $export = `${\ ctl_argv('catalogue', 'export')} 2>/dev/null`;
unlike($export, qr/\Q$new{sku}\E/, 'the export leaves it out');

# ---- the price back, as the demo has it ----
# counted as of before any order of the suite: the demo's stock less what
# every order since holds, as t/api/concurrency.t and crash.t expect
($rc) = import_file(write_feed('restore', { %$orig, stock_as_of => '2000-01-01T00:00:00Z' }));
is($rc, 0, 'the offer as the demo feed has it, counted before every order');
my ($inv) = sql("SELECT o.stock + COALESCE((SELECT SUM(quantity) FROM orders WHERE offer_id = o.id AND status NOT IN "
                . "('cancelled', 'declined', 'expired')), 0) FROM offers o WHERE o.id = '$off->{offer_id}'");
is($inv->[0], $orig->{stock}, '... its stock plus what its orders hold is the demo\'s stock again');

done_testing();
