# The relevance set (t/relevance/queries.json, judged by hand) against the
# suite's server: zero-result rate, recall@10 and MRR must not be worse than
# recorded in t/relevance/baseline.json (docs/search.md).
use strict;
use warnings FATAL => 'all';
use FindBin;
use lib "$FindBin::Bin/../lib";
use Test::More;
use AgentShop::Test;

require "$FindBin::Bin/../relevance/run.pl";

my $queries = AgentShop::Relevance::queries();
cmp_ok(scalar(grep { @{ $_->{relevant} } } @$queries), '>=', 60, 'at least 60 judged queries with an answer');

my ($fig, $out, $errors) = AgentShop::Relevance::measure(sub {
    my ($res, $v) = api_get($_[0]);
    return ($res->code == 200 && ref $v eq 'HASH' ? undef : 'HTTP ' . $res->code, $v);
});
is_deeply($errors, [], 'every relevance query is answered 200');
note(AgentShop::Relevance::describe($_)) for grep { $_->{answer} && ($_->{recall} // 0) < 1 } @$out;

my $base = AgentShop::Relevance::baseline();
for my $row (AgentShop::Relevance::compare($fig, $base)) {
    my ($f, $now, $was, $verdict) = @$row;
    diag(sprintf('%s %.4f (recorded %.4f)%s', $f->[2], $now, $was // -1,
                 $verdict eq 'better' ? ': better, record it with perl t/relevance/run.pl BASE --record' : ''));
    isnt($verdict, 'worse', "$f->[2] is not worse than recorded");
}

done_testing();
