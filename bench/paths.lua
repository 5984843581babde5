-- wrk script for `make bench`: GET each path of a file (one per line) in turn.
-- A line "PATH<tab>TAG" sends TAG as If-None-Match (a client revalidating
-- the copy it kept: 304 while the answer is the same).
-- usage: wrk ... -s bench/paths.lua URL -- PATHS_FILE [statuses]
-- With "statuses", done() prints the responses by class ("statuses: 2xx N
-- 3xx N 4xx N 5xx N"), so a run can tell refusals (4xx) from failures.
local paths, tags, i = {}, {}, 0
local threads = {}
n2, n3, n4, n5 = 0, 0, 0, 0

function setup(thread)
    threads[#threads + 1] = thread
end

function init(args)
    for line in io.lines(args[1]) do
        local path, tag = line:match("^([^\t]+)\t(.+)$")
        if path then
            paths[#paths + 1] = path
            tags[#paths] = tag
        elseif #line > 0 then
            paths[#paths + 1] = line
        end
    end
    -- each run and thread starts somewhere else (LuaJIT's generator starts
    -- from the same seed: every run would begin with the same paths, and a
    -- cache warmed by the run before would serve them)
    math.randomseed(os.time() * 1000 + (tonumber(tostring({}):match("0x(%x+)"), 16) or 0) % 1000)
    i = math.random(#paths)
    if args[2] == "statuses" then -- only then: wrk hands every response to Lua
        response = function(status)
            if status < 300 then n2 = n2 + 1
            elseif status < 400 then n3 = n3 + 1
            elseif status < 500 then n4 = n4 + 1
            else n5 = n5 + 1 end
        end
    end
end

function request()
    i = i % #paths + 1
    if tags[i] then return wrk.format("GET", paths[i], {["If-None-Match"] = tags[i]}) end
    return wrk.format("GET", paths[i])
end

function done(summary, latency, requests)
    local c = {0, 0, 0, 0}
    for _, t in ipairs(threads) do
        for k, v in ipairs({"n2", "n3", "n4", "n5"}) do c[k] = c[k] + (t:get(v) or 0) end
    end
    if c[1] + c[2] + c[3] + c[4] > 0 then
        io.write(string.format("statuses: 2xx %d 3xx %d 4xx %d 5xx %d\n", c[1], c[2], c[3], c[4]))
    end
end
