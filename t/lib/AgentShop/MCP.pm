package AgentShop::MCP;
# JSON-RPC over POST /v1/mcp for the MCP scripts (t/api/mcp*.t): messages by
# hand, and the checks of the errors MCP gives (docs/mcp.md).
use strict;
use warnings;
use Exporter 'import';
use JSON::PP;
use Test::More;
use AgentShop::Test;

our @EXPORT = qw(rpc request last_id tool tool_error tool_error_summary rpc_error_without_id);

my $JSON = JSON::PP->new->utf8->canonical;
my $TEXT = JSON::PP->new->canonical;    # for text already decoded into characters
my $MCP = ['Content-Type' => 'application/json', 'Accept' => 'application/json, text/event-stream'];

# One JSON-RPC message (a hash, or raw text) with extra headers: ($res, $data).
sub rpc {
    my ($msg, @h) = @_;
    return api('POST', '/mcp', [ @$MCP, @h ], ref $msg ? $JSON->encode($msg) : $msg);
}

my $seq = 0;

# A request with the next id (last_id() says which): ($res, $data).
sub request {
    my ($method, $params, @h) = @_;
    return rpc({ jsonrpc => '2.0', id => ++$seq, method => $method,
                 defined $params ? (params => $params) : () }, @h);
}

sub last_id { $seq }

# tools/call: ($res, $result-or-undef, $data).
sub tool {
    my ($name, $args, @h) = @_;
    my ($res, $d) = request('tools/call', { name => $name, arguments => $args }, @h);
    return ($res, ref $d eq 'HASH' ? $d->{result} : undef, $d);
}

# A tool's REST error as a 2025-06-18 or later client gets it: the object,
# its status, and a summary as text.
sub tool_error_summary {
    my ($r, $status, $code, $name) = @_;
    my $sc = $r ? $r->{structuredContent} : undef;
    ok($r && $r->{isError} && $sc && $sc->{error} eq $code && $r->{_meta}{'agentshop/status'} == $status, $name)
      or diag($JSON->encode($r // {}));
}

# A transport error: the HTTP status, and a JSON-RPC error without an id.
sub rpc_error_without_id {
    my ($res, $d, $status, $code, $name) = @_;
    ok($res->code == $status && ref $d eq 'HASH' && $d->{jsonrpc} eq '2.0' && !exists $d->{id}
       && $d->{error} && $d->{error}{code} == $code && length $d->{error}{message}, $name)
      or diag($res->code . ' ' . substr($res->content, 0, 300));
}

# A tool's REST error as a 2025-03-26 client gets it: the object, its status,
# and the same object as JSON text.
sub tool_error {
    my ($r, $status, $code, $name) = @_;
    my $sc = $r ? $r->{structuredContent} : undef;
    ok($r && $r->{isError} && $sc && $sc->{error} eq $code && length $sc->{message}
       && $r->{_meta}{'agentshop/status'} == $status
       && (eval { $JSON->encode($TEXT->decode($r->{content}[0]{text})) } // '') eq $JSON->encode($sc), $name)
      or diag($JSON->encode($r // {}));
}

1;
