// Builders for the core tests: the scenario default state of game-rules.md
// §16, a parser for the board notation used there, and state assertions.
import XCTest
@testable import HackMatrixCore

public func pos(_ row: Int, _ col: Int) -> Position { Position(row: row, col: col) }

/// The default scenario state (game-rules.md §16): seed 0, exit (5,5), empty board.
public func scenario(player: Position, configure: (inout GameState) -> Void = { _ in }) -> GameState {
    var state = GameState(seed: 0, player: player, exit: pos(5, 5))
    configure(&state)
    return state
}

public func dataBlock(_ points: Int, spawn: Int? = nil) -> Block {
    Block(kind: .data, hiddenIsData: true, points: points, program: 0, spawnCount: spawn ?? points)
}

public func programBlock(_ program: Program, spawn: Int? = nil) -> Block {
    Block(
        kind: .program, hiddenIsData: false, points: 0, program: program.rawValue,
        spawnCount: spawn ?? program.spawnCost)
}

extension GameState {
    public mutating func putBlock(_ block: Block, at p: Position, siphoned: Bool = false) {
        cells[p.index].content = .block
        cells[p.index].block = block
        cells[p.index].siphoned = siphoned
    }

    public mutating func own(_ programs: Program...) {
        for p in programs { owned.insert(p.rawValue) }
    }
}

/// Steps and fails the test on rejection.
@discardableResult
public func mustStep(_ state: inout GameState, _ action: Int, file: StaticString = #filePath, line: UInt = #line)
    -> StepResult
{
    do {
        return try state.step(action)
    } catch {
        XCTFail("action \(action) rejected: \(error)", file: file, line: line)
        return StepResult(components: RewardComponents(), events: StepEvents())
    }
}

/// Parses a board of game-rules.md §16 (rows listed top row first) into the
/// 36 cells it describes, plus the player's cell (`@`).
/// Tokens: `X` exit, `S+` data siphon prefix, `cN`/`eN` resources, `Dp/s` data
/// block, `P:NAME/s` program block, `Q:NAME/s` or `Q:Dp/s` question block.
public func parseBoard(_ text: String) -> (cells: [Cell], player: Position?) {
    var cells = [Cell](repeating: Cell(), count: Rules.cellCount)
    var player: Position?
    let rows = text.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
    precondition(rows.count == 6 && rows.allSatisfy { $0.count == 6 }, "board must be 6x6")
    for (i, tokens) in rows.enumerated() {
        let row = 5 - i
        for (col, raw) in tokens.enumerated() {
            var token = Substring(raw)
            var cell = Cell()
            if token.hasPrefix("@") { player = pos(row, col); token = token.dropFirst() }
            if token == "X" { cell.content = .exit; cells[row * 6 + col] = cell; continue }
            if token.hasPrefix("S+") { cell.content = .dataSiphon; token = token.dropFirst(2) }
            if token.hasPrefix("c") {
                cell.credits = Int(token.dropFirst())!
            } else if token.hasPrefix("e") {
                cell.energy = Int(token.dropFirst())!
            } else {
                cell.content = .block
                let question = token.hasPrefix("Q:")
                if question { token = token.dropFirst(2) }
                let parts = token.split(separator: "/")
                let spawn = Int(parts[1])!
                var block: Block
                if parts[0].hasPrefix("D") {
                    block = dataBlock(Int(parts[0].dropFirst())!, spawn: spawn)
                } else {
                    let name = String(parts[0].hasPrefix("P:") ? parts[0].dropFirst(2) : parts[0]).lowercased()
                    block = programBlock(Program(rawValue: Program.names.firstIndex(of: name)!)!, spawn: spawn)
                }
                if question { block.kind = .question }
                cell.block = block
            }
            cells[row * 6 + col] = cell
        }
    }
    return (cells, player)
}

/// Asserts cell by cell, naming the first differences.
public func assertCells(_ actual: [Cell], _ expected: [Cell], file: StaticString = #filePath, line: UInt = #line) {
    for c in 0..<Rules.cellCount where actual[c] != expected[c] {
        XCTFail("cell \(c) (\(c / 6),\(c % 6)): got \(actual[c]), expected \(expected[c])", file: file, line: line)
    }
}

/// The state a single accepted step should produce: `before` with the scenario's
/// changes; when an enemy phase ran, `turn` + 1 and its snapshot pushed; `stepIndex` + 1.
public func expected(after before: GameState, phaseRan: Bool, _ change: (inout GameState) -> Void) -> GameState {
    var state = before
    if phaseRan { state.turn += 1 }
    change(&state)
    if phaseRan { state.pushSnapshot() }
    state.stepIndex &+= 1
    return state
}

/// Compares two states field group by field group, so a failure names what differs.
public func assertSameState(
    _ actual: GameState, _ expected: GameState, file: StaticString = #filePath, line: UInt = #line
) {
    XCTAssertEqual(actual.player, expected.player, "player", file: file, line: line)
    XCTAssertEqual(actual.owned, expected.owned, "owned", file: file, line: line)
    assertCells(actual.cells, expected.cells, file: file, line: line)
    XCTAssertEqual(actual.enemies, expected.enemies, "enemies", file: file, line: line)
    XCTAssertEqual(actual.transmissions, expected.transmissions, "transmissions", file: file, line: line)
    XCTAssertEqual(actual.stage, expected.stage, "stage", file: file, line: line)
    XCTAssertEqual(actual.turn, expected.turn, "turn", file: file, line: line)
    XCTAssertEqual(actual.interval, expected.interval, "interval", file: file, line: line)
    XCTAssertEqual(actual.nextTaskTurn, expected.nextTaskTurn, "nextTaskTurn", file: file, line: line)
    XCTAssertEqual(actual.pending, expected.pending, "pending", file: file, line: line)
    XCTAssertEqual(actual.outcome, expected.outcome, "outcome", file: file, line: line)
    XCTAssertEqual(actual.stepIndex, expected.stepIndex, "stepIndex", file: file, line: line)
    XCTAssertEqual(actual.exit, expected.exit, "exit", file: file, line: line)
    XCTAssertEqual(actual.history.count, expected.history.count, "history depth", file: file, line: line)
    XCTAssertEqual(actual, expected, "whole state", file: file, line: line)
}
