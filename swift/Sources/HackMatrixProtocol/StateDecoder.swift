// setState: validates a JSON state against the schema of protocol.md §6 and
// builds the engine's GameState from it. Every problem is reported as a
// StateError naming the offending path; nothing is ever silently dropped.

import HackMatrixCore

public enum StateDecoder {
    static let boardKeys: Set<String> = [
        "player", "enemies", "transmissions", "blocks", "resources", "ownedPrograms", "turn", "showActivated",
        "scheduledTasksDisabled", "exit", "cellFlags", "atkPlusUsesThisStage",
    ]
    static let stateKeys = boardKeys.union([
        "stage", "scheduledTaskInterval", "nextScheduledTaskTurn", "pendingSiphonTransmissions", "stepActive",
        "seed", "stepIndex", "gameWon", "undoHistory",
    ])
    static let playerKeys: Set<String> = ["row", "col", "hp", "credits", "energy", "dataSiphons", "attackDamage", "score"]
    static let enemyKeys: Set<String> = [
        "type", "row", "col", "hp", "stunned", "spawnedFromSiphon", "isFromScheduledTask", "disabledTurns",
        "lastKnownRow", "lastKnownCol",
    ]
    static let transmissionKeys: Set<String> = [
        "row", "col", "turnsRemaining", "enemyType", "isFromScheduledTask", "spawnedFromSiphon",
    ]
    static let blockKeys: Set<String> = [
        "row", "col", "type", "siphoned", "points", "spawnCount", "programType", "programActionIndex", "isData",
    ]
    static let resourceKeys: Set<String> = ["row", "col", "credits", "energy", "dataSiphon"]
    static let cellFlagKeys: Set<String> = ["row", "col", "siphoned", "siphonCenter"]
    static let positionKeys: Set<String> = ["row", "col"]

    static let enemyTypeNames = "virus, daemon, glitch, cryptog"
    static let blockTypeNames = "data, program, question"
    static let uint32Range = 0...Int(UInt32.max)
    static let coordinate = 0...(Rules.gridSize - 1)

    /// Validates `value` (the request's `state`) completely and builds the game.
    public static func decode(_ value: JSONValue) throws(StateError) -> GameState {
        let top = try FieldReader(value, path: "state", allowed: stateKeys)
        let board = try decodeBoard(top, stateExit: nil)

        let stage = try top.int("stage", 1...Rules.lastStage, default: 1)
        let interval = try top.int("scheduledTaskInterval", Rules.minInterval...Rules.baseInterval(stage: 1), default: 12)
        let nextTaskTurn = try top.int("nextScheduledTaskTurn", 0...unboundedCap, default: interval)
        let pending = try top.int("pendingSiphonTransmissions", 0...unboundedCap, default: 0)
        let stepActive = try top.bool("stepActive")
        let seed = try top.int("seed", uint32Range, default: 0)
        let stepIndex = try top.int("stepIndex", uint32Range, default: 0)
        let gameWon = try top.bool("gameWon")
        if gameWon && stage != Rules.lastStage {
            throw StateError(path: "state.gameWon", reason: "inconsistent", message: "state.gameWon requires stage \(Rules.lastStage)")
        }
        if gameWon && board.player.hp == 0 {
            throw StateError(path: "state.gameWon", reason: "inconsistent", message: "state.gameWon requires player.hp of at least 1")
        }

        let historyValues = try top.array("undoHistory")
        if historyValues.count > Rules.undoDepth {
            throw StateError(
                path: "state.undoHistory", reason: "too many snapshots",
                message: "state.undoHistory holds \(historyValues.count) snapshots, at most \(Rules.undoDepth) are allowed")
        }
        var history: [Snapshot] = []
        for (i, snapshotValue) in historyValues.enumerated() {
            let reader = try FieldReader(snapshotValue, path: "state.undoHistory[\(i)]", allowed: boardKeys)
            let snap = try decodeBoard(reader, stateExit: board.exit)
            history.append(
                Snapshot(
                    player: snap.player, owned: snap.owned, turn: snap.turn, cells: snap.cells, enemies: snap.enemies,
                    transmissions: snap.transmissions, showActivated: snap.showActivated,
                    tasksDisabled: snap.tasksDisabled, atkPlusUses: snap.atkPlusUses))
        }

        var state = GameState(seed: UInt32(seed), player: board.player.position, exit: board.exit)
        state.stepIndex = UInt32(stepIndex)
        state.outcome = gameWon ? .won : (board.player.hp == 0 ? .died : .running)
        state.player = board.player
        state.owned = board.owned
        state.cells = board.cells
        state.enemies = board.enemies
        state.transmissions = board.transmissions
        state.stage = stage
        state.turn = board.turn
        state.interval = interval
        state.nextTaskTurn = nextTaskTurn
        state.pending = pending
        state.showActivated = board.showActivated
        state.tasksDisabled = board.tasksDisabled
        state.stepActive = stepActive
        state.atkPlusUses = board.atkPlusUses
        state.history = history

        if state.outcome == .running && !state.actionMask().contains(true) {
            throw StateError(path: "state", reason: "no legal action", message: "state is running but no action is legal in it")
        }
        return state
    }

    /// The fields a state and an undo snapshot share (protocol.md §6.5).
    struct Board {
        var player: Player
        var owned: ProgramSet
        var turn: Int
        var cells: [Cell]
        var enemies: [Enemy]
        var transmissions: [Transmission]
        var showActivated: Bool
        var tasksDisabled: Bool
        var atkPlusUses: Int
        var exit: Position
    }

    /// A located list entry, kept for the occupancy checks.
    struct Placed {
        var position: Position
        var path: String
    }

    /// Decodes the shared fields. `stateExit` is nil for the state itself and
    /// the state's exit for a snapshot, which switches on the snapshot rules.
    static func decodeBoard(_ reader: FieldReader, stateExit: Position?) throws(StateError) -> Board {
        let isSnapshot = stateExit != nil
        guard let playerValue = reader.object.present("player") else { throw reader.missing("player") }
        let player = try decodePlayer(playerValue, path: reader.child("player"))

        var enemies: [Enemy] = []
        var enemyPlaces: [Placed] = []
        for (i, value) in try reader.array("enemies").enumerated() {
            let path = "\(reader.child("enemies"))[\(i)]"
            let enemy = try decodeEnemy(value, path: path, inSnapshot: isSnapshot)
            enemies.append(enemy)
            enemyPlaces.append(Placed(position: enemy.position, path: path))
        }

        var transmissions: [Transmission] = []
        var transmissionPlaces: [Placed] = []
        for (i, value) in try reader.array("transmissions").enumerated() {
            let path = "\(reader.child("transmissions"))[\(i)]"
            let transmission = try decodeTransmission(value, path: path, inSnapshot: isSnapshot)
            transmissions.append(transmission)
            transmissionPlaces.append(Placed(position: transmission.position, path: path))
        }

        var blocks: [(Placed, Block, siphoned: Bool)] = []
        for (i, value) in try reader.array("blocks").enumerated() {
            let path = "\(reader.child("blocks"))[\(i)]"
            let (position, block, siphoned) = try decodeBlock(value, path: path)
            blocks.append((Placed(position: position, path: path), block, siphoned))
        }

        var resources: [(Placed, credits: Int, energy: Int, pickup: Bool)] = []
        for (i, value) in try reader.array("resources").enumerated() {
            let path = "\(reader.child("resources"))[\(i)]"
            let r = try FieldReader(value, path: path, allowed: resourceKeys)
            let position = try decodePosition(r)
            let credits = try r.int("credits", 0...unboundedCap, default: 0)
            let energy = try r.int("energy", 0...unboundedCap, default: 0)
            let pickup = try r.bool("dataSiphon")
            if credits > 0 && energy > 0 {
                throw StateError(path: path, reason: "inconsistent", message: "\(path) holds both credits and energy; a cell holds one kind of resource")
            }
            resources.append((Placed(position: position, path: path), credits, energy, pickup))
        }

        var owned = ProgramSet()
        for (i, value) in try reader.array("ownedPrograms").enumerated() {
            let path = "\(reader.child("ownedPrograms"))[\(i)]"
            let action = try FieldReader.integer(value, path: path, 5...(Rules.actionCount - 1))
            if owned.contains(action - 5) {
                throw StateError(path: path, reason: "duplicate", message: "\(path) repeats program \(action)")
            }
            owned.insert(action - 5)
        }

        let turn = try reader.int("turn", 0...unboundedCap, default: 0)
        let showActivated = try reader.bool("showActivated")
        let tasksDisabled = try reader.bool("scheduledTasksDisabled")
        let atkPlusUses = try reader.int("atkPlusUsesThisStage", 0...Rules.atkPlusPerStage, default: 0)

        var exit = stateExit ?? Position(row: 5, col: 5)
        if let exitValue = reader.object.present("exit") {
            exit = try decodePosition(FieldReader(exitValue, path: reader.child("exit"), allowed: positionKeys))
        }
        if let stateExit, exit != stateExit {
            throw StateError(
                path: reader.child("exit"), reason: "inconsistent",
                message: "\(reader.child("exit")) must equal state.exit (the history is emptied at every new stage)")
        }
        if !Rules.corners.contains(exit.index) {
            throw StateError(path: reader.child("exit"), reason: "not a corner", message: "\(reader.child("exit")) must be a corner of the board")
        }

        var flags: [(Placed, siphoned: Bool, center: Bool)] = []
        for (i, value) in try reader.array("cellFlags").enumerated() {
            let path = "\(reader.child("cellFlags"))[\(i)]"
            let r = try FieldReader(value, path: path, allowed: cellFlagKeys)
            let position = try decodePosition(r)
            flags.append((Placed(position: position, path: path), try r.bool("siphoned"), try r.bool("siphonCenter")))
        }

        // Occupancy (protocol.md §6.5), checked in rule order O1..O7.
        try requireDistinct(blocks.map(\.0), what: "block")
        try requireDistinct(resources.map(\.0), what: "resource")
        try requireDistinct(flags.map(\.0), what: "cell-flags")
        var isBlock = Array(repeating: false, count: Rules.cellCount)
        for (place, _, _) in blocks {
            if place.position == exit { throw conflict(place, "a block cannot stand on the exit (O2)") }
            isBlock[place.position.index] = true
        }
        for (place, _, _, pickup) in resources where pickup {
            if isBlock[place.position.index] { throw conflict(place, "a data-siphon pickup cannot lie under a block (O2)") }
            if place.position == exit { throw conflict(place, "a data-siphon pickup cannot lie on the exit (O2)") }
        }
        try requireDistinct(enemyPlaces, what: "enemy", rule: "O3")
        try requireDistinct(transmissionPlaces, what: "transmission", rule: "O4")
        var hasEnemy = Array(repeating: false, count: Rules.cellCount)
        for place in enemyPlaces { hasEnemy[place.position.index] = true }
        for place in transmissionPlaces where hasEnemy[place.position.index] {
            throw conflict(place, "a transmission cannot share a cell with an enemy (O5)")
        }
        for place in transmissionPlaces where isBlock[place.position.index] {
            throw conflict(place, "a transmission cannot stand on a block (O6)")
        }
        for place in enemyPlaces + transmissionPlaces where place.position == player.position {
            throw conflict(place, "nothing can share the player's cell (O7)")
        }

        var cells = Array(repeating: Cell(), count: Rules.cellCount)
        cells[exit.index].content = .exit
        for (place, block, siphoned) in blocks {
            cells[place.position.index].content = .block
            cells[place.position.index].block = block
            if siphoned { cells[place.position.index].siphoned = true }
        }
        for (place, credits, energy, pickup) in resources {
            cells[place.position.index].credits = credits
            cells[place.position.index].energy = energy
            if pickup { cells[place.position.index].content = .dataSiphon }
        }
        for (place, siphoned, center) in flags {
            if siphoned { cells[place.position.index].siphoned = true }
            if center { cells[place.position.index].siphonCenter = true }
        }

        return Board(
            player: player, owned: owned, turn: turn, cells: cells, enemies: enemies, transmissions: transmissions,
            showActivated: showActivated, tasksDisabled: tasksDisabled, atkPlusUses: atkPlusUses, exit: exit)
    }

    static func conflict(_ place: Placed, _ rule: String) -> StateError {
        StateError(
            path: place.path, reason: "occupied cell",
            message: "\(place.path) at (\(place.position.row),\(place.position.col)): \(rule)")
    }

    static func requireDistinct(_ places: [Placed], what: String, rule: String = "O1") throws(StateError) {
        var seen = Array(repeating: false, count: Rules.cellCount)
        for place in places {
            if seen[place.position.index] {
                throw StateError(
                    path: place.path, reason: rule == "O1" ? "duplicate cell" : "occupied cell",
                    message: "\(place.path): a second \(what) on (\(place.position.row),\(place.position.col)) (\(rule))")
            }
            seen[place.position.index] = true
        }
    }

    static func decodePosition(_ r: FieldReader) throws(StateError) -> Position {
        Position(row: try r.int("row", coordinate), col: try r.int("col", coordinate))
    }

    static func decodePlayer(_ value: JSONValue, path: String) throws(StateError) -> Player {
        let r = try FieldReader(value, path: path, allowed: playerKeys)
        var player = Player(position: try decodePosition(r))
        player.hp = try r.int("hp", 0...Rules.maxHP, default: Rules.maxHP)
        player.credits = try r.int("credits", 0...unboundedCap, default: 0)
        player.energy = try r.int("energy", 0...unboundedCap, default: 0)
        player.dataSiphons = try r.int("dataSiphons", 0...unboundedCap, default: 0)
        player.attack = try r.int("attackDamage", 1...unboundedCap, default: 1)
        player.score = try r.int("score", 0...unboundedCap, default: 0)
        return player
    }

    static func decodeEnemy(_ value: JSONValue, path: String, inSnapshot: Bool) throws(StateError) -> Enemy {
        let r = try FieldReader(value, path: path, allowed: enemyKeys)
        let type = try r.name("type", names: enemyTypeNames, Names.enemyType)
        let position = try decodePosition(r)
        let hp = try r.int("hp", 1...type.maxHP)
        let stunned = try r.bool("stunned")
        let fromSiphon = try r.bool("spawnedFromSiphon")
        let fromScheduled = try r.bool("isFromScheduledTask")
        let disabled = try r.int("disabledTurns", 0...1, default: 0)
        let lastRow = try r.optionalInt("lastKnownRow", coordinate)
        let lastCol = try r.optionalInt("lastKnownCol", coordinate)
        if (lastRow == nil) != (lastCol == nil) {
            // Reported at lastKnownRow either way, as the JAX loader does.
            throw StateError(path: r.child("lastKnownRow"), reason: "inconsistent", message: "lastKnownRow and lastKnownCol of \(path) must both be given or both be null")
        }
        if inSnapshot {
            try requireFalse(fromSiphon, r, "spawnedFromSiphon", "snapshots do not store origin flags")
            try requireFalse(fromScheduled, r, "isFromScheduledTask", "snapshots do not store origin flags")
            try requireFalse(stunned, r, "stunned", "snapshots are taken after stun marks are cleared")
            try requireFalse(disabled != 0, r, "disabledTurns", "snapshots are taken after disable marks are cleared")
        }
        // Only cryptogs use their last known position; others keep their own cell.
        var lastKnown = position
        if type == .cryptog, let lastRow, let lastCol { lastKnown = Position(row: lastRow, col: lastCol) }
        return Enemy(
            type: type, position: position, hp: hp, disabled: disabled, stunned: stunned, fromSiphon: fromSiphon,
            fromScheduled: fromScheduled, lastKnown: lastKnown)
    }

    static func decodeTransmission(_ value: JSONValue, path: String, inSnapshot: Bool) throws(StateError) -> Transmission {
        let r = try FieldReader(value, path: path, allowed: transmissionKeys)
        let position = try decodePosition(r)
        let countdown = try r.int("turnsRemaining", 1...unboundedCap)
        let type = try r.name("enemyType", names: enemyTypeNames, Names.enemyType)
        let fromScheduled = try r.bool("isFromScheduledTask")
        let fromSiphon = try r.bool("spawnedFromSiphon")
        if inSnapshot {
            try requireFalse(fromSiphon, r, "spawnedFromSiphon", "snapshots do not store origin flags")
            try requireFalse(fromScheduled, r, "isFromScheduledTask", "snapshots do not store origin flags")
        }
        return Transmission(
            position: position, countdown: countdown, enemyType: type, fromSiphon: fromSiphon, fromScheduled: fromScheduled)
    }

    static func requireFalse(_ flag: Bool, _ r: FieldReader, _ key: String, _ why: String) throws(StateError) {
        if flag {
            throw StateError(path: r.child(key), reason: "not allowed in a snapshot", message: "\(r.child(key)) must be false in a snapshot: \(why)")
        }
    }

    /// A block entry: its cell, the engine's block record and its siphoned mark.
    static func decodeBlock(_ value: JSONValue, path: String) throws(StateError) -> (Position, Block, Bool) {
        let r = try FieldReader(value, path: path, allowed: blockKeys)
        let position = try decodePosition(r)
        let kind = try r.name("type", names: blockTypeNames, Names.blockKind)
        let siphoned = try r.bool("siphoned")
        let points = try r.optionalInt("points", 0...unboundedCap)
        let spawnCount = try r.optionalInt("spawnCount", 0...unboundedCap)
        let namedProgram = try r.optionalName("programType", names: "a program name", Names.program)
        let indexedProgram = try r.optionalInt("programActionIndex", 5...(Rules.actionCount - 1)).map { $0 - 5 }
        let isData = try r.optionalBool("isData")

        let dataBearing: Bool
        switch kind {
        case .data: dataBearing = true
        case .program: dataBearing = false
        case .question:
            guard let isData else { throw r.missing("isData") }
            dataBearing = isData
        }

        if dataBearing {
            let blockPoints: Int
            if let points {
                blockPoints = points
            } else if kind == .question {
                throw r.missing("points")
            } else {
                blockPoints = 5
            }
            let block = Block(kind: kind, hiddenIsData: true, points: blockPoints, program: 0, spawnCount: spawnCount ?? blockPoints)
            return (position, block, siphoned)
        }

        let program: Int
        switch (namedProgram, indexedProgram) {
        case (nil, nil): throw r.missing("programType")
        case (let name?, let index?) where name != index:
            throw StateError(
                path: r.child("programActionIndex"), reason: "inconsistent",
                message: "\(r.child("programActionIndex")) (\(index + 5)) names another program than programType (\(Program.names[name]))")
        case (let name?, _): program = name
        case (nil, let index?): program = index
        }
        let block = Block(kind: kind, hiddenIsData: false, points: 0, program: program, spawnCount: spawnCount ?? 2)
        return (position, block, siphoned)
    }
}
