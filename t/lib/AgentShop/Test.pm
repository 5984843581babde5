package AgentShop::Test;
# Helpers for the Apache::Test scripts: JSON requests against the real module,
# and the demo catalogue's data files as an independent oracle.
use strict;
use warnings;
use Exporter 'import';
use JSON::PP;
use Apache::Test ();
use Apache::TestRequest ();
use HTTP::Request;
use POSIX qw(floor);

our @EXPORT = qw(api api_get is_json_error demo_data contradicts expected_status
  product_is_contradicted agent_price today_plus is_num is_int is_bool uri_escape_utf8);

my $JSON = JSON::PP->new->utf8->canonical->allow_nonref;

my $UA;

# api(METHOD, PATH, [HEADERS_ARRAYREF, [BODY]]) -> ($res, $data-or-undef).
# PATH is below /v1 and sent exactly as written (escapes included).
sub api {
    my ($method, $path, $headers, $body) = @_;
    $UA //= Apache::TestRequest::user_agent(keep_alive => 1, reset => 1);
    my $url = 'http://' . Apache::TestRequest::hostport() . "/v1$path";
    my $req = HTTP::Request->new($method, $url, $headers // [], $body);
    my $res = $UA->request($req);
    my $data;
    if (($res->header('Content-Type') // '') =~ m{^application/json}) {
        $data = eval { $JSON->decode($res->content) };
    }
    return ($res, $data);
}

sub api_get { api('GET', @_) }

# An error response: given status, JSON error object with code and message.
sub is_json_error {
    my ($res, $data, $status, $code, $name) = @_;
    my $ok = $res->code == $status
      && ref $data eq 'HASH'
      && defined $data->{error}
      && $data->{error} eq $code
      && defined $data->{message}
      && length $data->{message};
    Test::More::ok($ok, $name)
      or Test::More::diag("got " . $res->code . " " . substr($res->content, 0, 300));
    return $ok;
}

my %CACHE;

sub demo_data {
    my ($name) = @_;
    return $CACHE{$name} //= do {
        my $file = Apache::Test::vars('serverroot') . "/../sql/demo/$name.json";
        open my $fh, '<', $file or die "cannot read $file: $!";
        local $/;
        $JSON->decode(<$fh>);
    };
}

sub _same {
    my ($a, $b) = @_;
    if (ref $a eq 'ARRAY' && ref $b eq 'ARRAY') {
        return 0 unless @$a == @$b;
        my %seen = map { $JSON->encode($_) => 1 } @$b;
        return !grep { !$seen{ $JSON->encode($_) } } @$a;
    }
    return $JSON->encode($a) eq $JSON->encode($b) if ref $a || ref $b;
    return 0 if !defined $a || !defined $b;
    if ($a =~ /^-?[\d.]+$/ && $b =~ /^-?[\d.]+$/) { return abs($a - $b) < 1e-9 }
    return "$a" eq "$b";
}

# The rule of docs/api.md, written again independently of core.
sub contradicts {
    my ($row) = @_;
    return 0 unless defined $row->{claimed} && defined $row->{measured};
    return 0 if $row->{kind} eq 'info';
    if ($row->{kind} eq 'performance' && !ref $row->{claimed}) {
        my $tol = $row->{tolerance_pct} // 2;
        return $row->{measured} < $row->{claimed} * (1 - $tol / 100) - 1e-9;
    }
    return !_same($row->{claimed}, $row->{measured});
}

sub product_is_contradicted {
    my ($p) = @_;
    return 0 unless $p->{verification};
    return scalar grep { contradicts($_) } @{ $p->{specs} };
}

sub expected_status {
    my ($p) = @_;
    return 'pending' unless $p->{verification};
    return product_is_contradicted($p) ? 'contradicted' : 'verified';
}

sub agent_price { my ($retail) = @_; return floor(($retail * 95 + 50) / 100) }

sub today_plus {
    my ($days) = @_;
    my @t = gmtime(time + $days * 86400);
    return sprintf '%04d-%02d-%02d', $t[5] + 1900, $t[4] + 1, $t[3];
}

sub is_num  { my $v = shift; defined $v && !ref $v && $v =~ /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/ }
sub is_int  { my $v = shift; defined $v && !ref $v && $v =~ /^-?\d+$/ }
sub is_bool { my $v = shift; JSON::PP::is_bool($v) }

sub uri_escape_utf8 {
    my ($s) = @_;
    utf8::encode($s) if utf8::is_utf8($s);
    $s =~ s/([^A-Za-z0-9\-._~])/sprintf('%%%02X', ord $1)/ge;
    return $s;
}

1;
