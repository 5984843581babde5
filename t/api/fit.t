# POST /v1/compatibility/check (4.5) and POST /v1/questions (4.6).
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use AgentShop::Test;

my ($user, $key) = new_agent();
my $H = agent_headers($key);
my $products = demo_data('products');

# ---- compatibility check ----
my ($fits) = grep { grep { $_->{fit_status} eq 'fits' && grep { $_->{method} eq 'measured' } @{ $_->{evidence} } } @{ $_->{compatibility} // [] } } @$products;
my ($c) = grep { $_->{fit_status} eq 'fits' && grep { $_->{method} eq 'measured' } @{ $_->{evidence} } } @{ $fits->{compatibility} };
my ($res, $v) = post_json('/compatibility/check', $H, { sku => $fits->{sku}, device => $c->{device} });
is($res->code, 200, "check $fits->{sku} on $c->{device}");
is($v->{fit_status}, 'fits', '... fits');
ok($v->{right_item_guarantee}, '... under the right-item guarantee');
is(scalar @{ $v->{evidence} }, scalar @{ $c->{evidence} }, '... with every piece of evidence');
my ($m) = grep { $_->{method} eq 'measured' } @{ $c->{evidence} };
my ($me) = grep { ($_->{dimension} // '') eq $m->{dimension} } @{ $v->{evidence} };
like($me->{text}, qr/\Q$m->{label}\E measured .*; device /, '... said in words ("... measured ...; device ...")');
like($me->{text}, qr/by \Q$m->{by}\E, \Q$m->{at}\E/, '... with who measured it and when');
my ($dl) = grep { ($_->{dimension} // '') eq $m->{dimension} } @{ $v->{deltas} };
ok(abs($dl->{delta} - ($m->{part_value} - $m->{device_value})) < 1e-6, '... and the measured delta');
ok($dl->{ok}, '... within tolerance');

my ($nofit_p, $nc);
for my $p (@$products) {
    ($nc) = grep { $_->{fit_status} eq 'does_not_fit' && grep { $_->{method} eq 'measured' } @{ $_->{evidence} } } @{ $p->{compatibility} // [] };
    if ($nc) { $nofit_p = $p; last }
}
($res, $v) = post_json('/compatibility/check', $H, { sku => $nofit_p->{sku}, device => $nc->{device} });
is($v->{fit_status}, 'does_not_fit', "$nofit_p->{sku} does not fit $nc->{device}");
ok(!$v->{right_item_guarantee}, '... no guarantee');
ok((grep { !$_->{ok} } @{ $v->{deltas} }) || $v->{summary} =~ /\w/, '... the delta or note that rules it out');

my %checked = map { $_->{device} => 1 } @{ $fits->{compatibility} };
my ($unchecked) = grep { !$checked{ $_->{slug} } } @{ demo_data('devices') };
($res, $v) = post_json('/compatibility/check', $H, { sku => $fits->{sku}, device => $unchecked->{slug} });
is($v->{fit_status}, 'unknown', 'a device never checked against the part: unknown');
is_deeply($v->{evidence}, [], '... no evidence');
like($v->{summary}, qr/not been checked/, '... and it says so');

($res, $v) = post_json('/compatibility/check', [ 'Content-Type' => 'application/json' ], { sku => $fits->{sku}, device => $c->{device} });
is_json_error($res, $v, 403, 'AGENT_UNIDENTIFIED', 'check without a key: 403');
($res, $v) = post_json('/compatibility/check', $H, { sku => 'NO-SUCH', device => $c->{device} });
is_json_error($res, $v, 404, 'NOT_FOUND', 'unknown sku: 404');
($res, $v) = post_json('/compatibility/check', $H, { sku => $fits->{sku}, device => 'no-such-device' });
is_json_error($res, $v, 404, 'NOT_FOUND', 'unknown device: 404');
for my $b ([ { sku => $fits->{sku} }, 'device' ], [ { device => $c->{device} }, 'sku' ], [ { sku => 'AB', device => $c->{device} }, 'sku' ],
           [ { sku => $fits->{sku}, device => '' }, 'device' ], [ { sku => $fits->{sku}, device => 'd' x 101 }, 'device' ]) {
    ($res, $v) = post_json('/compatibility/check', $H, $b->[0]);
    is_json_error($res, $v, 400, 'VALIDATION_ERROR', 'check body ' . json_encode($b->[0]) . ' is 400')
      && is($v->{field}, $b->[1], "... field $b->[1]");
}

# ---- questions ----
my ($soap) = grep { $_->{category} eq 'hand-soap' && $_->{verification}
                    && grep { $_->{spec} eq 'volume_ml' && defined $_->{measured} && defined $_->{claimed} } @{ $_->{specs} } } @$products;
my ($vol) = grep { $_->{spec} eq 'volume_ml' } @{ $soap->{specs} };
($res, $v) = post_json('/questions', $H, { sku => $soap->{sku}, question => 'How much soap is in it?' });
is($res->code, 200, "ask about $soap->{sku}");
my $a = $v->{answer};
ok($a->{answered}, '... answered');
is($a->{basis}, 'measured', '... from measured data');
is($a->{rows}[0]{spec}, 'volume_ml', '... citing the volume row');
is($a->{rows}[0]{measured}, $vol->{measured}, '... with the measured value');
like($a->{text}, qr/measured \Q$vol->{measured}\E ml/, '... in the text, beside the claim') && like($a->{text}, qr/claimed \Q$vol->{claimed}\E ml/, '... (claim)');
ok($a->{measured_at} && $a->{node}, '... naming the measurement');

($res, $v) = post_json('/questions', $H, { sku => $soap->{sku}, question => 'Is it made in Italy?' });
ok(!$v->{answer}{answered}, 'a question nothing measured answers is not answered');
like($v->{answer}{text}, qr/only from measured data/, '... and it says so plainly');
my ($pending) = grep { !$_->{verification} && @{ $_->{specs} } } @$products;
my $label = $pending->{specs}[0]{label};
($res, $v) = post_json('/questions', $H, { sku => $pending->{sku}, question => "What is the $label?" });
ok(!$v->{answer}{answered}, 'a product not measured yet: not answered from the claim');
like($v->{answer}{text}, qr/not measured/, '... "not measured"');

(undef, my $view) = api_get("/products/$soap->{sku}");
my ($stored) = grep { $_->{question} eq 'How much soap is in it?' } @{ $view->{questions} };
ok($stored, 'questions and answers are listed in the product view');
ok($stored && $stored->{answer}{answered}, '... with their answer');

($res, $v) = post_json('/questions', [ 'Content-Type' => 'application/json' ], { sku => $soap->{sku}, question => 'How much soap?' });
is_json_error($res, $v, 403, 'AGENT_UNIDENTIFIED', 'a question without a key: 403');
($res, $v) = post_json('/questions', $H, { sku => 'NO-SUCH', question => 'How much soap is in it?' });
is_json_error($res, $v, 404, 'NOT_FOUND', 'a question about an unknown sku: 404');
for my $b ([ { sku => $soap->{sku}, question => 'Why?' }, 'question' ], [ { sku => $soap->{sku}, question => 'q' x 401 }, 'question' ],
           [ { sku => $soap->{sku} }, 'question' ], [ { question => 'How much soap is in it?' }, 'sku' ],
           [ { sku => $soap->{sku}, question => 42 }, 'question' ]) {
    ($res, $v) = post_json('/questions', $H, $b->[0]);
    is_json_error($res, $v, 400, 'VALIDATION_ERROR', 'question body ' . substr(json_encode($b->[0]), 0, 60) . ' is 400')
      && is($v->{field}, $b->[1], "... field $b->[1]");
}

done_testing();
