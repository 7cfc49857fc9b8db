// One CLI session: the current game (or none) and the request handler that
// turns each request line into exactly one response line (protocol.md §2–§8).
// Pure: no I/O. The only outside input is the seed source used when a reset
// names no seed (choosing a seed is not a game decision, randomness.md).

import HackMatrixCore

public struct Session {
    /// The current game; nil until the first successful reset or setState.
    public private(set) var game: GameState?
    /// Number of request lines handled so far (for error messages).
    public private(set) var lineNumber = 0
    private let seedSource: @Sendable () -> UInt32

    public init(seedSource: @escaping @Sendable () -> UInt32 = { UInt32.random(in: .min ... .max) }) {
        self.seedSource = seedSource
    }

    /// Handles one request line (without its line terminator) and appends the
    /// response (without the final newline) to `out`.
    public mutating func handle(line: UnsafeBufferPointer<UInt8>, into out: inout JSONWriter) {
        lineNumber += 1
        let mark = out.count
        do throws(ProtocolError) {
            let request = try parseRequest(line)
            try dispatch(request, into: &out)
        } catch {
            out.truncate(to: mark)
            error.write(to: &out)
        }
    }

    /// Convenience for tests and tools: one request string in, one response string out.
    public mutating func handle(line: String) -> String {
        var out = JSONWriter()
        var text = line
        text.withUTF8 { handle(line: $0, into: &out) }
        return out.string
    }

    // MARK: - Request envelope

    private func parseRequest(_ line: UnsafeBufferPointer<UInt8>) throws(ProtocolError) -> JSONObject {
        let value: JSONValue
        do throws(JSONParseError) {
            value = try JSONParser.parse(line)
        } catch {
            if error.reason == "empty input" {
                throw ProtocolError(.parseError, "line \(lineNumber) is empty")
            }
            throw ProtocolError(
                .parseError, "line \(lineNumber) is not valid JSON: \(error.reason) at byte \(error.offset)",
                details: [("offset", .number(Double(error.offset)))])
        }
        guard case .object(let request) = value else {
            throw ProtocolError(.invalidRequest, "a request must be a JSON object, not \(value.typeName)")
        }
        return request
    }

    private mutating func dispatch(_ request: JSONObject, into out: inout JSONWriter) throws(ProtocolError) {
        guard let commandValue = request["action"] else {
            throw ProtocolError(.invalidRequest, "the request has no \"action\" (the command name)")
        }
        guard case .string(let command) = commandValue else {
            throw ProtocolError(
                .invalidRequest, "\"action\" must be a string naming the command, not \(commandValue.typeName)")
        }
        switch command {
        case "step": try step(request, into: &out)
        case "reset": try reset(request, into: &out)
        case "getValidActions": writeValidActions(into: &out)
        case "getActionSpace":
            out.beginObject()
            out.key("actionSpaceSize"); out.int(Rules.actionCount)
            out.endObject()
        case "getObservationSpace": ProtocolInfo.writeObservationSpace(to: &out)
        case "setState": try setState(request, into: &out)
        case "getState":
            guard let game else { throw noGame }
            out.beginObject()
            out.key("state")
            StateEncoder.write(game, to: &out)
            out.endObject()
        case "getInternalState": writeInternalState(into: &out)
        case "hello", "version": ProtocolInfo.writeHello(to: &out)
        default:
            throw ProtocolError(
                .unknownCommand, "unknown command \"\(command)\"", details: [("action", .string(command))])
        }
    }

    private static let rewardKeys = RewardComponents.names.map(JSONWriter.prepareKey)
    private static let legacyRewardKeys = RewardComponents.legacyNames.map(JSONWriter.prepareKey)

    private var noGame: ProtocolError { ProtocolError(.noGame, "no game: send reset or setState first") }

    // MARK: - Commands

    private mutating func reset(_ request: JSONObject, into out: inout JSONWriter) throws(ProtocolError) {
        let withDigest = try Self.wantsDigest(request)
        var seed: UInt32
        if let seedValue = request.present("seed") {
            guard seedValue.isIntegral, case .number(let d) = seedValue, d >= 0, d <= Double(UInt32.max) else {
                throw ProtocolError(
                    .invalidRequest, "seed must be an integer in 0..4294967295", details: [("seed", seedValue)])
            }
            seed = UInt32(d)
        } else {
            seed = seedSource()
        }
        let state = GameState.newGame(seed: seed)
        game = state
        out.beginObject()
        out.key("observation")
        ObservationWriter.write(state, to: &out)
        out.key("seed"); out.int(Int(seed))
        out.key("info")
        out.beginObject()
        writeMaskAndIndex(state, digest: withDigest, into: &out)
        out.endObject()
        out.endObject()
    }

    private mutating func step(_ request: JSONObject, into out: inout JSONWriter) throws(ProtocolError) {
        guard let actionValue = request.present("actionIndex") else {
            throw ProtocolError(.invalidRequest, "step needs an integer \"actionIndex\"")
        }
        guard actionValue.isIntegral, case .number(let d) = actionValue else {
            throw ProtocolError(
                .invalidRequest, "actionIndex must be an integer, not \(Self.describe(actionValue))",
                details: [("actionIndex", actionValue)])
        }
        let withDigest = try Self.wantsDigest(request)
        guard var state = game else { throw noGame }
        if state.outcome != .running {
            throw ProtocolError(.episodeOver, "the episode is over: send reset or setState to start another")
        }
        guard d >= 0, d < Double(Rules.actionCount) else {
            throw ProtocolError(
                .actionOutOfRange, "actionIndex \(Self.numberText(d)) is outside 0..\(Rules.actionCount - 1)",
                details: [("actionIndex", actionValue)])
        }
        let action = Int(d)
        // Release the session's reference first so the engine mutates
        // uniquely owned arrays instead of copying them on write. A rejected
        // step changes nothing, so the game is put back as it was.
        game = nil
        defer { game = state }
        let result: StepResult
        do throws(StepError) {
            result = try state.step(action)
        } catch {
            switch error {
            case .actionMasked:
                throw ProtocolError(
                    .actionMasked, "action \(action) (\(ProtocolInfo.actionName(action))) is not allowed in this state",
                    details: [("actionIndex", .number(Double(action)))])
            case .episodeOver, .actionOutOfRange:
                // Already ruled out above: the engine disagrees with the checks.
                throw ProtocolError(.internalError, "the engine rejected action \(action) unexpectedly (\(error))")
            }
        }

        out.beginObject()
        out.key("observation")
        ObservationWriter.write(state, to: &out)
        out.key("reward"); out.double(result.reward)
        out.key("done"); out.bool(result.done)
        out.key("info")
        out.beginObject()
        if result.events.exitReached { out.key("stage_complete"); out.bool(true) }
        if result.events.playerDied { out.key("death"); out.bool(true) }
        if result.events.gameWon { out.key("game_won"); out.bool(true) }
        let values = result.components.values
        out.key("reward_breakdown")
        out.beginObject()
        for (k, name) in Self.legacyRewardKeys.enumerated() {
            out.key(prepared: name)
            out.double(values[k + 1])
        }
        out.endObject()
        out.key("reward_components")
        out.beginObject()
        for (k, name) in Self.rewardKeys.enumerated() {
            out.key(prepared: name)
            out.double(values[k])
        }
        out.endObject()
        writeMaskAndIndex(state, digest: withDigest, into: &out)
        out.endObject()
        out.endObject()
    }

    private mutating func setState(_ request: JSONObject, into out: inout JSONWriter) throws(ProtocolError) {
        guard let stateValue = request.present("state") else {
            throw ProtocolError(.invalidRequest, "setState needs a \"state\" object")
        }
        guard case .object = stateValue else {
            throw ProtocolError(.invalidRequest, "\"state\" must be an object, not \(stateValue.typeName)")
        }
        let withDigest = try Self.wantsDigest(request)
        let state: GameState
        do throws(StateError) {
            state = try StateDecoder.decode(stateValue)
        } catch {
            throw error.protocolError
        }
        game = state
        out.beginObject()
        out.key("observation")
        ObservationWriter.write(state, to: &out)
        out.key("info")
        out.beginObject()
        writeMaskAndIndex(state, digest: withDigest, into: &out)
        out.endObject()
        out.endObject()
    }

    /// The optional `obsDigest` flag of reset, step and setState (protocol.md §5.9).
    private static func wantsDigest(_ request: JSONObject) throws(ProtocolError) -> Bool {
        guard let value = request.present("obsDigest") else { return false }
        guard case .bool(let flag) = value else {
            throw ProtocolError(
                .invalidRequest, "obsDigest must be true or false, not \(describe(value))",
                details: [("obsDigest", value)])
        }
        return flag
    }

    private func writeValidActions(into out: inout JSONWriter) {
        out.beginObject()
        out.key("validActions")
        out.beginArray()
        if let game {
            for (action, allowed) in game.actionMask().enumerated() where allowed {
                out.element()
                out.int(action)
            }
        }
        out.endArray()
        out.endObject()
    }

    private func writeInternalState(into out: inout JSONWriter) {
        out.beginObject()
        guard let game else {
            out.key("scheduledTaskInterval"); out.int(0)
            out.key("nextScheduledTaskTurn"); out.int(0)
            out.key("pendingSiphonTransmissions"); out.int(0)
            out.key("turnCount"); out.int(0)
            out.key("enemies"); out.beginArray(); out.endArray()
            out.endObject()
            return
        }
        out.key("scheduledTaskInterval"); out.int(game.interval)
        out.key("nextScheduledTaskTurn"); out.int(game.nextTaskTurn)
        out.key("pendingSiphonTransmissions"); out.int(game.pending)
        out.key("turnCount"); out.int(game.turn)
        out.key("enemies")
        out.beginArray()
        for enemy in game.enemies {
            out.element()
            out.beginObject()
            out.key("row"); out.int(enemy.position.row)
            out.key("col"); out.int(enemy.position.col)
            out.key("type"); out.string(enemy.type.name)
            out.key("hp"); out.int(enemy.hp)
            out.key("disabledTurns"); out.int(enemy.disabled)
            out.key("isStunned"); out.bool(enemy.stunned)
            out.key("spawnedFromSiphon"); out.bool(enemy.fromSiphon)
            out.key("isFromScheduledTask"); out.bool(enemy.fromScheduled)
            out.endObject()
        }
        out.endArray()
        out.key("stepIndex"); out.int(Int(game.stepIndex))
        out.key("seed"); out.int(Int(game.seed))
        out.key("stepActive"); out.bool(game.stepActive)
        out.key("atkPlusUsesThisStage"); out.int(game.atkPlusUses)
        out.key("exit")
        out.beginObject()
        out.key("row"); out.int(game.exit.row)
        out.key("col"); out.int(game.exit.col)
        out.endObject()
        out.key("undoDepth"); out.int(game.history.count)
        out.key("gameOver"); out.bool(game.outcome != .running)
        out.endObject()
    }

    /// `"action_mask": [...28...], "step_index": n` inside an open info object,
    /// then `"obs_digest"` when the request asked for it.
    private func writeMaskAndIndex(_ state: GameState, digest: Bool, into out: inout JSONWriter) {
        out.key("action_mask")
        out.beginArray()
        for allowed in state.actionMask() {
            out.element()
            out.bool(allowed)
        }
        out.endArray()
        out.key("step_index"); out.int(Int(state.stepIndex))
        if digest { out.key("obs_digest"); out.string(ObservationDigest.digest(of: state)) }
    }

    /// What a rejected request value is, for messages ("3.5", "a string").
    static func describe(_ value: JSONValue) -> String {
        if case .number(let d) = value { return numberText(d) }
        return value.typeName
    }

    /// A request number as text: integral values without a fraction.
    static func numberText(_ d: Double) -> String {
        if d.isFinite && d.rounded(.towardZero) == d && abs(d) < 1e18 { return String(Int(d)) }
        return d.description
    }
}
