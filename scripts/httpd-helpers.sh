# Sourced by the scripts that start an httpd of their own (test-scale.sh,
# bench.sh): free ports, and stopping the server again.

# free_ports FROM TO N: the first N ports in FROM..TO nobody listens on, one a line.
free_ports() {
    local p n=0
    for p in $(seq "$1" "$2"); do
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && continue
        echo "$p"
        n=$((n + 1))
        [ "$n" -eq "$3" ] && return 0
    done
    return 1
}

# stop_httpd DIR: stops the httpd whose pid is in DIR/httpd.pid and waits (10 s
# at most, then SIGKILL) until it has gone.
stop_httpd() {
    local pid
    pid=$(cat "$1/httpd.pid" 2>/dev/null) || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for _ in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null
}
