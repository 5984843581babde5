# httpds of a test's own, apart from Apache::Test's server: each started in
# the foreground on a free port, from a configuration written here, with
# mod_agentshop serving /v1 on the given database (t/api/startup.t,
# t/api/index_httpd.t).
package AgentShop::OwnHttpd;
use strict;
use warnings FATAL => 'all';
use Exporter 'import';
use IO::Socket::INET;
use POSIX qw(WNOHANG);
use Time::HiRes qw(sleep time);

our @EXPORT = qw(free_port start_httpd stop_httpd httpd_log);

# A port nobody listens on, other than those in @avoid (a second Listen of
# the same httpd).
sub free_port {
    my (@avoid) = @_;
    for my $p (8701 + $$ % 300 .. 9200) {
        next if grep { $_ == $p } @avoid;
        next if IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $p, Proto => 'tcp');
        my $l = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => $p, Listen => 1,
                                      ReuseAddr => 1) or next;
        close $l;
        return $p;
    }
    die 'no free port';
}

# What the httpd in $root wrote: its error log, then its stdout and stderr.
sub httpd_log {
    my ($root) = @_;
    my $log = '';
    for my $f ("$root/error_log", "$root/stdout") {
        open my $lf, '<', $f or next;
        local $/;
        $log .= <$lf> // '';
    }
    return $log;
}

# start_httpd(dir => DIR, name => NAME, db => FILE, top => CHECKOUT,
#             [extra => CONF], [mpm => 'event' | 'prefork'], [log_level => LEVEL],
#             [location => CONF], [path => PATH], [avoid => [PORT, ...]])
# Starts httpd in DIR/NAME on database FILE (signing key DIR/signing.key,
# made when missing). location: what <Location PATH> holds (default
# SetHandler agentshop and the signing key); path: the location's (default
# /v1); avoid: ports not to take.
# Returns (exit code, or undef while it runs; its log; pid; port).
sub start_httpd {
    my (%o) = @_;
    my ($dir, $name, $db, $top) = @o{qw(dir name db top)};
    my $extra = $o{extra} // '';
    my $mpm = $o{mpm} // 'event';
    my $level = $o{log_level} // 'warn';
    my $root = "$dir/$name";
    mkdir $root or die "$root: $!";
    if (!-e "$dir/signing.key") {
        open my $k, '>', "$dir/signing.key" or die $!;
        print $k 'z' x 64;
        close $k;
    }
    my $port = free_port(@{ $o{avoid} // [] });
    my $path = $o{path} // '/v1';
    my $location = $o{location}
      // "    SetHandler agentshop\n    AgentShopSigningKeyFile \"$dir/signing.key\"";
    open my $fh, '>', "$root/httpd.conf" or die $!;
    print $fh <<"CONF";
ServerRoot "$root"
DefaultRuntimeDir "$root"
PidFile "$root/httpd.pid"
Listen 127.0.0.1:$port
ServerName 127.0.0.1:$port
ErrorLog "$root/error_log"
LogLevel $level
LoadModule mpm_${mpm}_module /usr/lib/apache2/modules/mod_mpm_$mpm.so
LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so
LoadModule dbd_module /usr/lib/apache2/modules/mod_dbd.so
LoadModule agentshop_module "$top/mod_agentshop/.libs/mod_agentshop.so"
StartServers 1
DBDriver sqlite3
DBDParams "$db"
$extra
<Location $path>
$location
</Location>
CONF
    close $fh;
    my $pid = fork() // die "fork: $!";
    if (!$pid) {
        # a process group of its own: prefork's parent signals its whole
        # group when it stops, which would otherwise be the test's
        POSIX::setpgid(0, 0);
        open STDOUT, '>', "$root/stdout";
        open STDERR, '>&', \*STDOUT;
        exec '/usr/sbin/apache2', '-f', "$root/httpd.conf", '-DFOREGROUND';
        exit 127;
    }
    my $rc;
    for (1 .. 100) {    # 10 s
        if (waitpid($pid, WNOHANG) == $pid) { $rc = $? >> 8; last }
        last if IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port, Proto => 'tcp')
          && -e "$root/httpd.pid";
        sleep 0.1;
    }
    return ($rc, httpd_log($root), $pid, $port);
}

sub stop_httpd {
    my ($pid) = @_;
    kill 'TERM', $pid;
    my $t = time + 10;
    while (time < $t) { return if waitpid($pid, WNOHANG) == $pid; sleep 0.1 }
    kill 'KILL', $pid;
    waitpid($pid, 0);
}

1;
