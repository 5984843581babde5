# A client generated from the served OpenAPI document, as a TypeScript user
# would make one: openapi-typescript turns GET /v1/openapi.json into types
# (t/var/ts-client/api.d.ts, generated here, never committed), `tsc --strict`
# compiles t/js/shop-client.ts (openapi-fetch over those types) against them,
# and node runs it against this server: search, quote, order (and the same
# order replayed), read, cancel, and an unknown order. A field the client uses
# that the document renames or retypes fails the compile; an answer other than
# the document's fails the client's checks or the ones below.
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use JSON::PP;
use File::Copy qw(copy);
use File::Path qw(make_path remove_tree);
use Apache::Test ();
use Apache::TestRequest ();
use AgentShop::Test;

once_per_run("A client generated from the OpenAPI document and compiled");

my $top = Apache::Test::vars('serverroot') . '/..';
my $build = Apache::Test::vars('serverroot') . '/var/ts-client';
my $modules = "$top/t/js/node_modules";
my ($node) = grep { -x } map { "$_/node" } split /:/, $ENV{PATH};
ok($node, 'node is installed');
my $have = ok(-x "$modules/.bin/openapi-typescript" && -x "$modules/.bin/tsc" && -d "$modules/openapi-fetch"
              && -d "$modules/\@types/node",
              'openapi-typescript, TypeScript, openapi-fetch and the Node.js types are installed (npm ci in t/js)');
unless ($node && $have) {
    done_testing();
    exit 0;
}

# The build directory: the served document, the types generated from it, the
# client, and t/js's packages (a link, so that tsc and node find them).
remove_tree($build);
make_path($build) or die "mkdir $build: $!";
my ($res) = api_get('/openapi.json');
is($res->code, 200, 'GET /v1/openapi.json: 200');
for ([ 'openapi.json', $res->content ], [ 'package.json', qq({"type": "module", "private": true}\n) ]) {
    open my $fh, '>', "$build/$_->[0]" or die "$build/$_->[0]: $!";
    print $fh $_->[1];
    close $fh or die "$build/$_->[0]: $!";
}
copy("$top/t/js/shop-client.ts", "$build/shop-client.ts") or die "shop-client.ts: $!";
symlink($modules, "$build/node_modules") or die "node_modules: $!";

sub run_in_build {
    my ($cmd) = @_;
    my $out = `cd '$build' && $cmd 2>&1`;
    return ($? >> 8, $out);
}

my ($rc, $out) = run_in_build("timeout 300 node_modules/.bin/openapi-typescript openapi.json -o api.d.ts");
is($rc, 0, 'openapi-typescript generates the types from the served document') or diag($out);
my $types = do { local $/; open my $fh, '<', "$build/api.d.ts" or die "api.d.ts: $!"; <$fh> } // '';
# The values of several types, and those that may be null, each read as its
# union (orval read the former `type: [...]` arrays as one type).
like($types, qr/^\s*SpecValue: boolean \| number \| string \| string\[\] \| null;$/m,
     '... a specification value is boolean | number | string | string[] | null');
like($types, qr/^\s*image_url: string \| null;$/m, '... an image_url is string | null');
like($types, qr/^\s*decision: \("approve" \| "decline"\) \| null;$/m, '... a decision is "approve" | "decline" | null');

($rc, $out) = run_in_build("timeout 300 node_modules/.bin/tsc --strict --noEmitOnError --target es2022 "
                           . "--module nodenext --moduleResolution nodenext --types node shop-client.ts api.d.ts");
is($rc, 0, 'tsc --strict compiles the client against the generated types') or diag($out);
unless (-f "$build/shop-client.js") {
    fail('the client was compiled');
    done_testing();
    exit 0;
}

# An agent with a mandate that takes the order without a person's approval.
my ($user, $key) = new_agent();
new_mandate($user, per_order => 1000, monthly => 10000, confirm_above => 1000);
my $base = 'http://' . Apache::TestRequest::hostport() . '/v1';
($rc, $out) = run_in_build("timeout 120 node shop-client.js '$base' '$key'");
is($rc, 0, 'the client ran') or diag($out);
my $r = eval { JSON::PP->new->decode((grep { /^\{/ } split /\n/, $out)[-1] // '') };
ok($r && !$r->{failure}, "the client's checks held to the end") or diag($r ? $r->{failure} : $out);
$r //= {};
my %step = map { $_->{name} => $_ } @{ $r->{steps} // [] };
my ($search, $quote, $order, $again, $got, $cancel, $missing) =
  map { $step{$_} // {} } qw(search quote order order_again get cancel missing);

is($search->{status}, 200, 'search: 200');
ok(is_int($search->{count}) && $search->{count} >= 1, '... with results') or diag(json_encode($search));
is($quote->{status}, 201, 'quote: 201');
is($quote->{sku}, $search->{sku}, '... for the product found');
is($quote->{offer_id}, $search->{offer_id}, '... its best offer');
is($quote->{unit_price_cents}, $search->{price_cents}, '... at the price search showed');
is($quote->{currency}, 'EUR', '... in EUR');
is($order->{status}, 201, 'order: 201');
is($order->{order_status}, 'placed', '... placed');
is($order->{quote_id}, $quote->{id}, '... from the quote');
is($order->{total_cents}, $quote->{total_cents}, '... for its total');
is($order->{replayed}, undef, '... not a replay');
is_deeply($order->{timeline}, ['placed'], '... its timeline: placed');
is($again->{status}, 201, 'the same order again: 201');
is($again->{id}, $order->{id}, '... the same order');
is($again->{replayed}, 'true', '... replayed (Idempotent-Replayed: true)');
is($got->{status}, 200, 'get order: 200');
is($got->{order_status}, 'placed', '... placed');
ok(is_bool($got->{cancellable}) && $got->{cancellable}, '... cancellable');
is($got->{shipped_at}, undef, '... not shipped');
is($cancel->{status}, 200, 'cancel: 200');
is($cancel->{order_status}, 'cancelled', '... cancelled');
ok(is_bool($cancel->{cancellable}) && !$cancel->{cancellable}, '... and no longer cancellable');
is_deeply($cancel->{timeline}, [ 'placed', 'cancelled' ], '... its timeline: placed, cancelled');
is($missing->{status}, 404, 'an unknown order: 404');
is($missing->{error}, 'NOT_FOUND', '... NOT_FOUND, read as the typed error object');
ok(length($missing->{message} // ''), '... with a message');

# What the client did is what the server kept.
my (undef, $rest) = api_get('/orders/' . ($order->{id} // 'none'), agent_headers($key));
is($rest && $rest->{status}, 'cancelled', 'the order the client cancelled is cancelled over REST too');
is($rest && $rest->{agent}, 'ts-client-test/1.0', '... and names the client as its agent');

done_testing();
