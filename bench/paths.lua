-- wrk script for `make bench`: GET each path of a file (one per line) in turn.
-- usage: wrk ... -s bench/paths.lua URL -- PATHS_FILE
local paths, i = {}, 0

function init(args)
    for line in io.lines(args[1]) do
        if #line > 0 then paths[#paths + 1] = line end
    end
    i = math.random(#paths) -- each thread starts somewhere else
end

function request()
    i = i % #paths + 1
    return wrk.format("GET", paths[i])
end
