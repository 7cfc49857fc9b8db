// `hackmatrix --bench N`: steps per second of a random valid-action policy,
// measured in-process (no pipe), once through the engine API alone and once
// through the protocol Session (request parsing and response JSON included).

import HackMatrixCore
import HackMatrixProtocol

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

struct BenchResult {
    var steps = 0
    var episodes = 0
    var seconds = 0.0
    var stepsPerSecond: Double { seconds > 0 ? Double(steps) / seconds : 0 }
}

/// Engine only: newGame / actionMask / step.
func benchEngine(steps: Int, policySeed: UInt64) -> BenchResult {
    var random = RandomPolicy(seed: policySeed)
    var result = BenchResult()
    var episodeSeed: UInt32 = 0
    var state = GameState.newGame(seed: episodeSeed)
    result.episodes = 1
    let start = monotonicSeconds()
    while result.steps < steps {
        guard let action = random.pick(state.actionMask()) else {
            logLine("bench: a running game allowed no action")
            break
        }
        guard let outcome = try? state.step(action) else {
            logLine("bench: engine rejected a masked-valid action \(action)")
            break
        }
        result.steps += 1
        if outcome.done {
            episodeSeed &+= 1
            state = GameState.newGame(seed: episodeSeed)
            result.episodes += 1
        }
    }
    result.seconds = monotonicSeconds() - start
    return result
}

/// Through the Session: the same loop as a pipe client, minus the pipe.
func benchSession(steps: Int, policySeed: UInt64) -> BenchResult {
    var random = RandomPolicy(seed: policySeed)
    var session = Session()
    var out = JSONWriter(capacity: 1 << 16)
    var result = BenchResult()
    var episodeSeed: UInt32 = 0

    func send(_ line: String) {
        out.removeAll()
        var text = line
        text.withUTF8 { session.handle(line: $0, into: &out) }
    }

    let start = monotonicSeconds()
    send("{\"action\":\"reset\",\"seed\":\(episodeSeed)}")
    result.episodes = 1
    while result.steps < steps {
        guard let state = session.game, let action = random.pick(state.actionMask()) else { break }
        send("{\"action\":\"step\",\"actionIndex\":\(action)}")
        result.steps += 1
        if session.game?.outcome != .running {
            episodeSeed &+= 1
            send("{\"action\":\"reset\",\"seed\":\(episodeSeed)}")
            result.episodes += 1
        }
    }
    result.seconds = monotonicSeconds() - start
    return result
}

func runBench(steps: Int) {
    let engine = benchEngine(steps: steps, policySeed: 1)
    let session = benchSession(steps: steps, policySeed: 1)
    var out = JSONWriter()
    out.beginObject()
    for (name, r) in [("engine", engine), ("session", session)] {
        out.key(named: name)
        out.beginObject()
        out.key("steps"); out.int(r.steps)
        out.key("episodes"); out.int(r.episodes)
        out.key("seconds"); out.double(r.seconds)
        out.key("steps_per_second"); out.double(r.stepsPerSecond)
        out.endObject()
    }
    out.endObject()
    out.raw("\n")
    _ = out.withBytes { writeAll(1, $0) }
}
